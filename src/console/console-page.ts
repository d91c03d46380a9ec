import { html } from 'hono/html';

/**
 * The console's one page; the script renders the rest. URLs are relative to `/console`, so the
 * console also works behind a proxy that serves the API under a path prefix.
 */
export const consolePage = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>memrag console</title>
<link rel="stylesheet" href="console/console.css">
<script type="module" src="console/console.js"></script>
</head>
<body>
<div id="console-root"><p class="boot">Loading the memrag console…</p></div>
<noscript><p>The memrag console needs JavaScript. The API is described at <a href="docs">docs</a>.</p></noscript>
</body>
</html>
`;
