/** The package ships Emscripten factories without type declarations. */
declare module '@echogarden/speex-resampler-wasm' {
  const factory: (options?: object) => Promise<unknown>;
  export default factory;
}
declare module '@echogarden/speex-resampler-wasm/simd' {
  const factory: (options?: object) => Promise<unknown>;
  export default factory;
}
