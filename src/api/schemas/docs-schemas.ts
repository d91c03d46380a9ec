import { z } from 'zod';

/** The files the `/docs` page loads besides itself. */
export const DOCS_ASSETS = ['swagger-ui.css', 'swagger-ui-bundle.js', 'swagger-init.js'] as const;
export type DocsAsset = (typeof DOCS_ASSETS)[number];

export const docsAssetParams = z.strictObject({ asset: z.enum(DOCS_ASSETS) });
