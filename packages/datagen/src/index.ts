export type { GeneratePackagesOptions, PackageDocument } from './nuget.js';
export {
  COINED_NAMES,
  coinedName,
  compareVersions,
  DESCRIPTION_ZIPF_EXPONENT,
  generatePackage,
  generatePackages,
  MAX_VERSIONS_PER_PACKAGE,
  packageIdAt,
  TAG_ZIPF_EXPONENT,
  toNdjsonLines,
} from './nuget.js';
export { PACKAGES_SEARCH_INDEX } from './nuget-index.js';
export type { LogNormalOptions, ParetoOptions } from './random.js';
export { logNormalInt, mix32, paretoInt, Random, ZipfSampler } from './random.js';
export {
  DESCRIPTION_WORDS,
  FIRST_NAMES,
  ID_OWNERS,
  ID_PRODUCTS,
  ID_SUFFIXES,
  LAST_NAMES,
  PLATFORMS,
  TAGS,
} from './vocabulary.js';
