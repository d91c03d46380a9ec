// The dependency rules of src/ (docs/ARCHITECTURE.md explains them). `npm run test:architecture`
// checks every import against them; this file is their source of truth.

/** Folders that hold a feature: what the shared layers below them must not reach into. */
const FEATURES =
  'agents|audit|auth|background|blocks|chat|cli|compaction|conversations|delegation|documents|jobs|llm|mcp|memory|portability|runs|users|workflows|api|http|console';

/** Entry points: everything else under src/ must be reachable from one of them. */
const ENTRY_POINTS = [
  '^src/main\\.ts$',
  '^src/worker-main\\.ts$',
  '^src/cli/[^/]+\\.ts$',
  // Bundled for the browser by the console's build (console-bundle.ts names it by path).
  '^src/console/browser/main\\.tsx$',
  // Loaded by path as worker threads (util/module-worker.ts).
  '-worker\\.ts$',
  // The typed client is published for other programs; the console is one user of it.
  '^src/client/memrag-client\\.ts$',
  // Published as `memrag/ai-sdk` (package.json's exports) for programs on the Vercel AI SDK.
  '^src/ai-sdk/index\\.ts$',
];

module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      comment: 'An import cycle makes two modules one: neither can be read, tested or moved alone.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'no-folder-cycles',
      comment:
        'Two folders that import each other are one feature in two places: neither can be read or moved alone, ' +
        'even when no single file closes the loop (a lower floor that reaches back up, two features that share internals).',
      severity: 'error',
      scope: 'folder',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'db-imports-no-feature',
      comment: 'src/db is the data layer every feature stands on: schema, connections, SQL helpers. It knows no feature.',
      severity: 'error',
      from: { path: '^src/db/' },
      to: { path: `^src/(${FEATURES}|retrieval|workers)/` },
    },
    {
      name: 'retrieval-imports-no-feature',
      comment:
        'src/retrieval is the shared vocabulary (search engine, BM25, fusion, filters, tags, Source, the knowledge port): the features use it, not the other way.',
      severity: 'error',
      from: { path: '^src/retrieval/' },
      to: { path: `^src/(${FEATURES})/` },
    },
    {
      name: 'chat-only-from-edges',
      comment: 'The chat stands on memories, documents, conversations and runs; only the edges and the composition root reach it.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(chat/|http/|mcp/|app-context[a-z-]*\\.ts$|main\\.ts$)' },
      to: { path: '^src/chat/' },
    },
    {
      name: 'http-only-from-edges',
      comment:
        'HTTP is an edge: nothing under it imports it, the composition root (app-context.ts) and MCP included; what it ' +
        'needs from there is passed in, and what HTTP and MCP share is in src/api.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(http/|main\\.ts$)' },
      to: { path: '^src/http/' },
    },
    {
      name: 'api-only-from-edges',
      comment:
        "src/api is the API's contract (request and reply schemas, the error table, deadlines) that HTTP and MCP both serve: only they and main.ts use it.",
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(api/|http/|mcp/|main\\.ts$)' },
      to: { path: '^src/api/' },
    },
    {
      name: 'api-imports-no-edge',
      comment: 'The contract stands under both edges: it imports neither of them, nor the composition root that wires them.',
      severity: 'error',
      from: { path: '^src/api/' },
      to: { path: '^src/((http|mcp|console|cli)/|app-context[a-z-]*\\.ts$|main\\.ts$|worker-main\\.ts$)' },
    },
    {
      name: 'composition-root-only-from-edges',
      comment: 'app-context.ts (with its parts, app-context-*.ts) wires everything; a feature that imported it would depend on every other.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(http/|mcp/|cli/|app-context[a-z-]*\\.ts$|main\\.ts$|worker-main\\.ts$)' },
      to: { path: '^src/app-context[a-z-]*\\.ts$' },
    },
    {
      name: 'llm-imports-no-feature',
      comment: 'src/llm (the loop, providers, retries, prices) runs any tools for any caller: it knows no feature.',
      severity: 'error',
      from: { path: '^src/llm/' },
      to: { path: '^src/', pathNot: '^src/(llm|config|text|util)/' },
    },
    {
      name: 'compaction-imports-llm-and-text-only',
      comment: 'Compaction works on messages alone, whoever stores them.',
      severity: 'error',
      from: { path: '^src/compaction/' },
      to: { path: '^src/', pathNot: '^src/(compaction|llm|text|config|util)/' },
    },
    {
      name: 'console-browser-imports-client-only',
      comment: 'The console runs in the browser: it talks to the API through the typed client, never server code.',
      severity: 'error',
      from: { path: '^src/console/browser/' },
      to: { path: '^src/', pathNot: '^src/(console/browser|client)/' },
    },
    {
      name: 'client-stands-alone',
      comment: 'The typed client is published for other programs: it imports nothing else of the server.',
      severity: 'error',
      from: { path: '^src/client/' },
      to: { path: '^src/', pathNot: '^src/client/' },
    },
    {
      name: 'ai-sdk-imports-client-only',
      comment:
        'The AI SDK integration is published for other programs: it talks to the API through the typed client, and ' +
        'depends on nothing but the client, the `ai` package (a peer dependency) and zod.',
      severity: 'error',
      from: { path: '^src/ai-sdk/' },
      to: { pathNot: '^(src/(ai-sdk|client)/|node_modules/(ai|zod)/)' },
    },
    {
      name: 'src-imports-no-tests',
      comment: 'What ships imports nothing of the tests, their kit or the scripts.',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(test|testkit|scripts)/' },
    },
    {
      name: 'no-dead-files',
      comment: 'A file no entry point reaches is dead code (tests alone do not keep a file alive).',
      severity: 'error',
      from: { path: ENTRY_POINTS.join('|') },
      to: { path: '^src/', pathNot: `${ENTRY_POINTS.join('|')}|\\.d\\.ts$|\\.css$`, reachable: false },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^src/client/api-types\\.ts$' },
    // Type-only imports count: a type couples two folders as much as a value does.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.tsx', '.js', '.mjs', '.cjs', '.json'] },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
