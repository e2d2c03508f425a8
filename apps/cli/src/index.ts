export { buildProgram, type CliActions } from './program.js';
