import { describe, expect, it } from 'vitest';
import { isDatabaseUnavailable } from '../../src/db/database-unavailable.js';

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });
// Drizzle wraps a driver error as the `cause` of its "Failed query" error.
const wrapped = (cause: unknown) => new Error('Failed query: select 1', { cause });

describe('isDatabaseUnavailable', () => {
  it.each([
    ['ECONNREFUSED', withCode('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432')],
    ['ECONNRESET, wrapped by Drizzle', wrapped(withCode('ECONNRESET', 'read ECONNRESET'))],
    ['a refused connect to every address of a host', new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')], '')],
    ['57P01 admin_shutdown', wrapped(withCode('57P01', 'terminating connection due to administrator command'))],
    ['57P03 cannot_connect_now', withCode('57P03', 'the database system is starting up')],
    ['53300 too_many_connections', withCode('53300', 'sorry, too many clients already')],
    ['08006 connection_failure', withCode('08006')],
    ['a connection that ended', wrapped(new Error('Connection terminated unexpectedly'))],
    ['a connect that timed out', new Error('Connection terminated due to connection timeout')],
    ['a busy pool past its connect timeout', wrapped(new Error('timeout exceeded when trying to connect'))],
    ['57014 query_canceled: past the statement timeout', wrapped(withCode('57014', 'canceling statement due to statement timeout'))],
    ['no answer within the statement timeout (pg query_timeout)', wrapped(new Error('Query read timeout'))],
    ['a client whose connection failed', new Error('Client has encountered a connection error and is not queryable')],
    ['a closed PGlite', new Error('PGlite is closed')],
  ])('%s: yes', (_name, err) => {
    expect(isDatabaseUnavailable(err)).toBe(true);
  });

  it.each([
    ['a unique violation', wrapped(withCode('23505', 'duplicate key value violates unique constraint'))],
    ['a syntax error', wrapped(withCode('42601', 'syntax error at or near "selct"'))],
    ['NUL in text', wrapped(withCode('22021', 'invalid byte sequence for encoding "UTF8": 0x00'))],
    // Class 08, but a statement past 65,535 bind parameters: a bug to fix, not an outage to wait out.
    ['08P01 protocol_violation', wrapped(withCode('08P01', 'bind message has 4464 parameter formats but 0 parameters'))],
    ['a plain error', new Error('embedder failed')],
    ['not an error', 'ECONNREFUSED'],
    ['null', null],
  ])('%s: no', (_name, err) => {
    expect(isDatabaseUnavailable(err)).toBe(false);
  });

  it('ends on a cause chain that loops', () => {
    const a: Error & { cause?: unknown } = new Error('a');
    a.cause = new Error('b', { cause: a });
    expect(isDatabaseUnavailable(a)).toBe(false);
  });
});
