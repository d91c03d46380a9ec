// `memrag/ai-sdk`: memrag for the Vercel AI SDK (the `ai` package, a peer dependency).
export { MemragApiError } from './memrag-api-error.js';
export { type MemragMemoryMiddleware, type MemragMemoryMiddlewareOptions, memragMemoryMiddleware } from './memory-middleware.js';
export { type MemragTools, type MemragToolsOptions, memragTools } from './memrag-tools.js';
