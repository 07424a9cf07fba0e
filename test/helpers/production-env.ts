// A production configuration (sandbox mode off) as environment variables, valid as it is: its own
// secrets, none of the sandbox's published ones. Tests change one variable at a time from it.
export const PRODUCTION_ENV = {
  OBV_BASE_URL: 'https://api.provider.example',
  OBV_CLIENT_ID: 'client',
  OBV_CLIENT_SECRET: 'client-secret-from-the-provider',
  OBV_PUBLIC_URL: 'https://shop.example',
  OBV_WEBHOOK_SECRET: `whsec_${Buffer.from('production-webhook-key-0123456789').toString('base64')}`,
  OBV_MERCHANT_ID: 'merchant-1',
  OBV_SEALING_KEYS: 'k1:dux0ek/rqEzDBV9T2T/zc3W7us82yMS7iNmiqbwxckk=',
};
