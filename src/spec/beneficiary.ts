// The beneficiary of an initiate body (spec §2), apart so that offline validation builds it alone.
import { z } from 'zod';

export const currency = z.string().regex(/^[A-Z]{3}$/, 'an ISO 4217 code of 3 capital letters');

/** Spec §2 Beneficiary. "Complete closed list of beneficiary fields: not shown": unknown fields are accepted (loose). */
export const Beneficiary = z.looseObject({
  accountName: z.string().min(1),
  accountCurrency: currency,
  alipayId: z.string().optional(),
  openId: z.string().optional(),
  wechatUserId: z.string().optional(),
  iban: z.string().optional(),
  accountNumber: z.string().optional(),
  swiftCode: z.string().optional(),
  bankName: z.string().optional(),
  beneficiaryCountry: z.string().optional(),
  intermediarySwift: z.string().optional(),
  address: z.string().optional(),
  city: z.string().optional(),
  postCode: z.string().optional(),
  routingNumber: z.string().optional(),
  accountType: z.enum(['checking', 'savings']).optional(),
  bankCode: z.string().optional(),
  sortCode: z.string().optional(),
  fpsId: z.string().optional(),
  phoneNumber: z.string().optional(),
  email: z.string().optional(),
  countryCode: z.string().optional(),
});
export type Beneficiary = z.infer<typeof Beneficiary>;
