// Loaded with --import: makes node-llama-cpp unresolvable, as on an install without it.
import { register } from 'node:module';

const hook = `export async function resolve(specifier, context, next) {
  if (specifier === 'node-llama-cpp' || specifier.startsWith('node-llama-cpp/')) {
    const err = new Error("Cannot find package 'node-llama-cpp' imported from " + context.parentURL);
    err.code = 'ERR_MODULE_NOT_FOUND';
    throw err;
  }
  return next(specifier, context);
}`;
register(`data:text/javascript,${encodeURIComponent(hook)}`);
