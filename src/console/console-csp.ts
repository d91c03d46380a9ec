/**
 * The console's CSP: its own scripts, styles and API calls, nothing inline and nothing from
 * another origin (its packages are bundled from node_modules, never loaded from a CDN).
 * `blob:` downloads (conversation exports) are navigations, which CSP does not govern. Images: a
 * chat's attached ones are shown from their data URLs, a conversation's kept ones from object URLs
 * of what the attachments route sent (an <img> cannot send the API key).
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');
