// A key this machine saw working in one environment is refused in the other, whatever label it is given now
// (README "Configuration and keys"): a label is what the user says, the usage file what the service answered.
import { describe, expect, it } from 'vitest';
import { ApiKey } from '../../src/client/api-key.ts';
import { assertKeyFitsEnvironment, resolveEnvironment } from '../../src/client/environment.ts';

const vars = { PAYOUT_GATEWAY_HOST: 'gateway.example.com' };
const sandbox = resolveEnvironment({ env: 'sandbox', vars });
const production = resolveEnvironment({ env: 'production', vars });
const custom = resolveEnvironment({ baseUrl: 'https://proxy.example.com', vars: {} });

describe('a key seen in one environment, labelled for the other', () => {
  const labelledSandbox = new ApiKey('plain_key_used_in_production', { environment: 'sandbox', labelSource: 'PAYOUT_API_KEY_ENV' });

  it('is refused in the sandbox and at a custom base URL when this machine used it in production', () => {
    expect(() => assertKeyFitsEnvironment(labelledSandbox, sandbox, 'production')).toThrow(/this machine has used it in production/);
    expect(() => assertKeyFitsEnvironment(labelledSandbox, custom, 'production')).toThrow(/this machine has used it in production/);
  });

  it('is refused in production when this machine used it in the sandbox', () => {
    const labelledProduction = new ApiKey('plain_key_used_in_sandbox', { environment: 'production', labelSource: 'key file' });
    expect(() => assertKeyFitsEnvironment(labelledProduction, production, 'sandbox')).toThrow(/this machine has used it in sandbox/);
  });

  it('is taken where label and use agree', () => {
    expect(() => assertKeyFitsEnvironment(labelledSandbox, sandbox, 'sandbox')).not.toThrow();
  });
});
