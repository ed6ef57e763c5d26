// The one TypeScript-to-JavaScript transform of the project (SWC): `npm run build` compiles src/ with it
// (scripts/compile.mjs) and Jest runs the tests' sources through it (jest.config.js), so what the tests load and
// what is bundled into dist/ come from the same settings. Type checking is tsc's alone (`npm run typecheck`, and
// npm test's checks): SWC only strips the types, file by file (tsconfig.json's isolatedModules holds the sources to
// that).
//
// Nest's dependency injection reads the constructor parameter types that the decorators' metadata records
// (design:paramtypes), hence legacy decorators with decoratorMetadata, as tsconfig.json's experimentalDecorators and
// emitDecoratorMetadata ask of tsc; Nest names providers after their classes, hence keepClassNames.
export const swcOptions = {
  jsc: {
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: true },
    target: 'es2022',
    keepClassNames: true,
  },
  module: { type: 'es6' },
};
