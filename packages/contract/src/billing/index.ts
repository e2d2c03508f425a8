export * from './dimensions.js';
export * from './query.js';
export * from './response.js';
export * from './routes.js';
