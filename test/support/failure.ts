import assert from 'node:assert/strict';

import { FleetError } from '../../src/base/errors.js';

/** The FleetError a promise must fail with (anything else, or success, fails the test). */
export async function fleetFailure(p: Promise<unknown>): Promise<FleetError> {
  try {
    await p;
  } catch (error) {
    assert.ok(error instanceof FleetError, `not a FleetError: ${String(error)}`);
    return error;
  }
  assert.fail('expected a failure');
}
