import { describe, expect, it } from 'vitest';
import { chmod, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { ApiKey, ClientConfigError, keyFingerprint, loadApiKey, parseKeyFile } from '../../src/client/api-key.ts';
import { assertKeyFitsEnvironment, resolveEnvironment } from '../../src/client/environment.ts';
import { connect } from '../../src/client/connect.ts';
import { WebhookRegisterRequest } from '../../src/spec/schemas.ts';
import { quotaSentence, UsageCounter } from '../../src/client/quota.ts';

describe('resolveEnvironment', () => {
  const vars = { PAYOUT_GATEWAY_HOST: 'gateway.example.com' };
  it('derives production and sandbox from one gateway host', () => {
    expect(resolveEnvironment({ env: 'production', vars })).toEqual({
      name: 'production',
      keyClass: 'production',
      baseUrl: 'https://gateway.example.com',
    });
    expect(resolveEnvironment({ env: 'sandbox', vars }).baseUrl).toBe('https://gateway.staging.example.com');
    expect(resolveEnvironment({ env: 'sandbox', gatewayHost: 'https://gateway.example.com/', vars: {} }).baseUrl).toBe(
      'https://gateway.staging.example.com',
    );
  });
  it('takes production only from the command line: PAYOUT_ENV=production alone is refused (issue 43, item 7)', () => {
    expect(() => resolveEnvironment({ vars: { ...vars, PAYOUT_ENV: 'production' } })).toThrow(/--env production/);
    expect(() => resolveEnvironment({ baseUrl: 'https://gateway.example.com', vars: { PAYOUT_ENV: 'Production' } })).toThrow(/alone/);
    expect(resolveEnvironment({ env: 'production', vars: { ...vars, PAYOUT_ENV: 'production' } }).name).toBe('production');
  });

  it('never defaults to production', () => {
    expect(resolveEnvironment({ vars }).name).toBe('sandbox');
    expect(resolveEnvironment({ baseUrl: 'http://127.0.0.1:9/', vars }).name).toBe('custom');
    expect(resolveEnvironment({ baseUrl: 'http://127.0.0.1:9/', vars }).keyClass).toBe('sandbox');
    expect(resolveEnvironment({ vars: { ...vars, PAYOUT_ENV: 'local' } })).toMatchObject({ name: 'local', baseUrl: undefined });
  });
  it('refuses what it cannot resolve instead of falling back', () => {
    expect(() => resolveEnvironment({ env: 'sandbox', vars: {} })).toThrow(/PAYOUT_GATEWAY_HOST/);
    expect(() => resolveEnvironment({ env: 'prod', vars })).toThrow(/one of local, sandbox, production/);
    expect(() => resolveEnvironment({ env: 'production', gatewayHost: 'gateway.staging.example.com', vars: {} })).toThrow(
      /sandbox \(staging\) host/,
    );
    expect(() => resolveEnvironment({ env: 'sandbox', gatewayHost: 'api.example.com', vars: {} })).toThrow(/gateway\./);
    expect(() => resolveEnvironment({ env: 'local', baseUrl: 'http://x.test', vars })).toThrow(ClientConfigError);
    expect(() => resolveEnvironment({ baseUrl: 'https://u:p@x.test', vars })).toThrow(/user name/);
  });
  it('refuses a base URL at the production host unless production is named on the command line', () => {
    const vars = { PAYOUT_GATEWAY_HOST: 'gateway.example.com', PAYOUT_BASE_URL: 'https://Gateway.Example.com./' };
    expect(() => resolveEnvironment({ env: 'sandbox', vars })).toThrow(/production host: name --env production/);
    expect(() => resolveEnvironment({ vars })).toThrow(ClientConfigError);
    expect(() => resolveEnvironment({ baseUrl: 'https://gateway.example.com:443', gatewayHost: 'gateway.example.com', vars: {} })).toThrow(
      /--env production/,
    );
    expect(resolveEnvironment({ env: 'production', vars })).toMatchObject({ name: 'production', keyClass: 'production' });
    // the staging host, another host, or no gateway host known: a custom server as before
    expect(resolveEnvironment({ vars: { ...vars, PAYOUT_BASE_URL: 'https://gateway.staging.example.com' } }).name).toBe('custom');
    expect(resolveEnvironment({ baseUrl: 'https://gateway.example.com', vars: {} }).name).toBe('custom');
    const staging = { PAYOUT_GATEWAY_HOST: 'gateway.staging.example.com', PAYOUT_BASE_URL: 'https://gateway.staging.example.com' };
    expect(resolveEnvironment({ env: 'sandbox', vars: staging }).name).toBe('sandbox');
  });
  it('takes plain http for a base URL and a webhook URL on the same hosts: this machine only', () => {
    const asBaseUrl = (url: string) => resolveEnvironment({ baseUrl: url, vars: {} }).baseUrl !== undefined;
    const asWebhook = (url: string) => WebhookRegisterRequest.safeParse({ url }).success;
    for (const url of ['http://127.0.0.1:9/h', 'http://127.1.2.3:9/h', 'http://LocalHost.:9/h', 'http://[::1]:9/h']) {
      expect(asBaseUrl(url), url).toBe(true);
      expect(asWebhook(url), url).toBe(true);
    }
    for (const url of ['http://10.0.0.5/h', 'http://127.0.0.1.example.com/h', 'http://localhost.example.com/h', 'http://[::2]/h']) {
      expect(() => asBaseUrl(url), url).toThrow(/plain http/);
      expect(asWebhook(url), url).toBe(false);
    }
  });
});

describe('connect', () => {
  it('refuses --env local when its caller started no embedded sandbox', async () => {
    const e: unknown = await connect({ env: 'local', stateDir: false, vars: {}, cwd: '/' }).then(
      (c) => c.close(),
      (x: unknown) => x,
    );
    expect(e).toBeInstanceOf(ClientConfigError);
    expect((e as Error).message).toMatch(/embedded sandbox.*option sandbox/);
  });

  it('refuses an embedded sandbox for an environment with an address of its own, and stops it', async () => {
    let closed = 0;
    const sandbox = { url: 'http://127.0.0.1:1', close: async () => void closed++ };
    const e: unknown = await connect({ baseUrl: 'http://127.0.0.1:2', sandbox, stateDir: false, vars: {}, cwd: '/' }).then(
      (c) => c.close(),
      (x: unknown) => x,
    );
    expect(e).toBeInstanceOf(ClientConfigError);
    expect(closed).toBe(1);
  });
});

describe('API keys', () => {
  it('never show the secret when printed, inspected or serialised', () => {
    const k = new ApiKey('sk_sandbox_print_me_not_123');
    for (const s of [String(k), JSON.stringify({ k }), inspect({ k }), `${String(k)}`]) expect(s).not.toContain('print_me_not');
    expect(k.reveal()).toBe('sk_sandbox_print_me_not_123');
    expect(k.fingerprint).toBe(keyFingerprint('sk_sandbox_print_me_not_123'));
    expect(k.fingerprint).toMatch(/^[0-9a-f]{16}$/);
  });

  it('read key files: the key alone, or name=value lines with an environment', () => {
    expect(parseKeyFile('abc123\n', '/k/acme.key')).toMatchObject({ environment: undefined, source: 'key-file' });
    const k = parseKeyFile('# acme\nenvironment=production\nkey="abc123"\n', '/k/acme.key');
    expect(k.environment).toBe('production');
    expect(k.reveal()).toBe('abc123');
    expect(parseKeyFile('abc123', '/k/acme.sandbox.key').environment).toBe('sandbox');
    expect(() => parseKeyFile('environment=sandbox\nkey=abc', '/k/acme.production.key')).toThrow(/file name says production/);
    expect(() => parseKeyFile('environment=production\nkey=sk_sandbox_x', '/k/a.key')).toThrow(/looks like a sandbox key/);
    expect(() => parseKeyFile('token=abc', '/k/a.key')).toThrow(/unknown setting/);
    expect(() => parseKeyFile('# only a comment\n', '/k/a.key')).toThrow(/no key/);
  });

  it('load from --key-file before PAYOUT_API_KEY, warn about a readable file, and never echo the key in errors', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'keys-'));
    const file = join(dir, 'acme.key');
    await writeFile(file, 'environment=sandbox\nkey=from_file_999\n');
    await chmod(file, 0o644);
    const warnings: string[] = [];
    const k = await loadApiKey({ keyFile: file, env: { PAYOUT_API_KEY: 'from_env_111' }, cwd: '/', warn: (m) => warnings.push(m) });
    expect(k!.reveal()).toBe('from_file_999');
    expect(warnings.join()).toMatch(/chmod 600/);
    expect((await loadApiKey({ env: { PAYOUT_API_KEY: 'from_env_111' }, cwd: '/' }))!.source).toBe('environment');
    expect(await loadApiKey({ env: {}, cwd: '/' })).toBeUndefined();
    await expect(loadApiKey({ env: { PAYOUT_API_KEY: 'has space_secret' }, cwd: '/' })).rejects.toThrow(/spaces/);
    await expect(loadApiKey({ env: { PAYOUT_API_KEY: 'has space_secret' }, cwd: '/' })).rejects.not.toThrow(/space_secret/);
  });

  it('refuse a key labelled for the other environment', () => {
    const sandbox = resolveEnvironment({ env: 'sandbox', vars: { PAYOUT_GATEWAY_HOST: 'gateway.example.com' } });
    const production = resolveEnvironment({ env: 'production', vars: { PAYOUT_GATEWAY_HOST: 'gateway.example.com' } });
    const custom = resolveEnvironment({ baseUrl: 'https://proxy.example.com', vars: {} });
    const prodKey = new ApiKey('abc', { environment: 'production', labelSource: 'key file' });
    const sandboxKey = new ApiKey('sk_sandbox_abc');
    expect(() => assertKeyFitsEnvironment(prodKey, sandbox)).toThrow(/refusing to use a production key/);
    expect(() => assertKeyFitsEnvironment(prodKey, custom)).toThrow(/--env production/);
    expect(() => assertKeyFitsEnvironment(sandboxKey, production)).toThrow(/refusing to use a sandbox key/);
    expect(() => assertKeyFitsEnvironment(new ApiKey('plain'), production, 'sandbox')).toThrow(/this machine has used it in sandbox/);
    expect(() => assertKeyFitsEnvironment(prodKey, production)).not.toThrow();
    expect(() => assertKeyFitsEnvironment(new ApiKey('plain'), sandbox)).not.toThrow();
  });
});

describe('UsageCounter', () => {
  it('adds up counts from two counters on the same file, per calendar month', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'usage-'));
    let now = new Date('2025-01-31T23:59:59Z');
    const a = new UsageCounter({ stateDir: dir, flushMs: 0, now: () => now });
    const b = new UsageCounter({ stateDir: dir, flushMs: 0, now: () => now });
    a.count('fp', 3);
    b.count('fp', 4);
    await Promise.all([a.flush(), b.flush()]);
    expect((await a.usage('fp')).used).toBe(7);
    now = new Date('2025-02-01T00:00:01Z');
    a.count('fp');
    expect(await a.usage('fp')).toEqual({ fingerprint: 'fp', month: '2025-02', used: 1, quota: 10_000, remaining: 9_999 });
    a.label('fp', 'production');
    await a.close();
    expect(await b.environmentOf('fp')).toBe('production');
  });

  it('refuses a torn or foreign usage file, instead of forgetting where each key was used', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'usage-'));
    const a = new UsageCounter({ stateDir: dir, flushMs: 0 });
    a.label('fp', 'production');
    await a.close();
    const path = join(dir, 'usage.json');
    // (writeFileAtomic leaves it whole: torn or garbled, another hand wrote it)
    for (const text of ['', '{"version":1,"keys":{"fp":{"months":{},"environment":"produc', '[]']) {
      await writeFile(path, text);
      const b = new UsageCounter({ stateDir: dir, flushMs: 0 });
      // read as empty, a plain key used in production was not refused at a custom base URL, and its label written over
      await expect(b.environmentOf('fp')).rejects.toMatchObject({
        name: 'ClientConfigError',
        reason: 'refused',
        message: expect.stringContaining(`${path} is not a usage file this tool wrote`),
      });
      b.count('fp');
      await expect(b.close()).rejects.toThrow(`rm ${path}`);
      expect(await readFile(path, 'utf8')).toBe(text);
    }
  });

  it('says what a batch needs against what is left', () => {
    const u = { fingerprint: 'f', month: '2025-03', used: 9_500, quota: 10_000, remaining: 500 };
    expect(quotaSentence(120, u)).toBe(
      'this batch needs about 120 requests; this key has used 9,500 of 10,000 this month (2025-03, UTC), as counted here',
    );
    expect(quotaSentence(600, u)).toMatch(/more than the 500 left/);
  });

  it("names a status refresh's needs, however many, as the refresh's", () => {
    const u = { fingerprint: 'f', month: '2025-03', used: 2_000, quota: 10_000, remaining: 8_000 };
    // status once rewrote "this batch" with a pattern that missed "1,234": the batch's words were printed
    expect(quotaSentence(1_234, u, 'this refresh')).toMatch(/^this refresh needs about 1,234 requests; this key has used 2,000/);
    expect(quotaSentence(1, u, 'this refresh')).toMatch(/^this refresh needs about 1 request; /);
  });
});
