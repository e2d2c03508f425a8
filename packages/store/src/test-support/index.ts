// What tests of other packages take from the store (package.json "./test-support").
export { testDatabases, type TestDatabase } from './databases.js';
export { newResource } from './resource-rows.js';
