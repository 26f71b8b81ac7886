import { RookeryError } from '@rookery/protocol';

/** The RookeryError a store call fails with; anything else, or no failure at all, fails the test. */
export async function failure(promise: Promise<unknown>): Promise<RookeryError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof RookeryError) return error;
    throw error;
  }
  throw new Error('expected the call to fail');
}
