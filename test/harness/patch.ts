// Shared by the patch room's tests: what a patch function threw, as reason and message.
import { PatchError } from '../../devcluster/patch/index.js';

/** The reason and exact message of the PatchError `fn` throws; undefined when it does not throw. */
export function patchErrorOf(fn: () => unknown): { reason: string; message: string } | undefined {
  try {
    fn();
  } catch (err) {
    if (err instanceof PatchError) return { reason: err.reason, message: err.message };
    throw err;
  }
  return undefined;
}
