/**
 * The architecture as a test (DESIGN.md "Layout"): imports point one way.
 * `npm test` runs `npm run lint:deps`; a violation fails CI.
 */
module.exports = {
  forbidden: [
    {
      name: 'process-entry-modules-are-not-imported',
      comment: 'modules that set up the process they are loaded in (the launcher helper, worker modules) run on their own; importing one would install its handlers (SIGTERM ignored, IPC messages taken) in the importer',
      severity: 'error',
      from: {},
      to: { path: '^(core/speechkit/launcher-process|core/speechkit/text/prepare-worker|inference/engines/spawn-worker)\\.ts$' },
    },
    {
      name: 'core-imports-no-feature',
      comment: 'core/ wires what registers with it; it imports nothing from plugins/, pipelines/ or inference/',
      severity: 'error',
      from: { path: '^core/' },
      to: { path: '^(plugins|pipelines|inference)/' },
    },
    {
      name: 'config-imports-nothing',
      comment: 'config/ imports nothing of the project',
      severity: 'error',
      from: { path: '^config/' },
      to: { path: '^(core|plugins|pipelines|inference|test)/' },
    },
    {
      name: 'plugins-are-isolated',
      comment: 'a plugin never imports another plugin; they talk through the bus',
      severity: 'error',
      from: { path: '^plugins/([^/]+)/' },
      to: { path: '^plugins/([^/]+)/', pathNot: '^plugins/$1/' },
    },
    {
      name: 'pipelines-are-isolated',
      comment: 'a pipelines module never imports another one',
      severity: 'error',
      from: { path: '^pipelines/([^/]+)/' },
      to: { path: '^pipelines/([^/]+)/', pathNot: '^pipelines/$1/' },
    },
    {
      name: 'features-do-not-cross-roots',
      comment: 'plugins, pipelines and inference meet only in core (contract, ports, shared libraries)',
      severity: 'error',
      from: { path: '^(plugins|pipelines|inference)/' },
      to: { path: '^(plugins|pipelines|inference)/', pathNot: '^$1/' },
    },
    {
      name: 'production-code-never-imports-tests',
      severity: 'error',
      from: { path: '^(core|plugins|pipelines|inference|config)/' },
      to: { path: '^test/' },
    },
    {
      name: 'no-circular',
      comment: 'no import cycles',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist)/' },
    tsPreCompilationDeps: true,
    // TypeScript 7 (the native compiler) has no JavaScript API for dependency-cruiser to parse with; swc parses instead.
    parser: 'swc',
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
