export * from './commands.js';
export * from './database.js';
export * from './documents.js';
export * from './errors.js';
export * from './http-problem.js';
export * from './indexes.js';
export * from './jobs.js';
export * from './queries.js';
