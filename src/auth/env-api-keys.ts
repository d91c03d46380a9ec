// Parsed in src/config, which reads API_KEYS and sits under every feature; auth takes the entries from there.
export { type EnvApiKey, parseEnvApiKeys } from '../config/env-api-keys.js';
