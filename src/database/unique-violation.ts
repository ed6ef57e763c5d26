/**
 * Whether a statement failed on a unique or primary-key constraint: better-sqlite3 raises its own
 * error, TypeORM wraps pg's in QueryFailedError with the driver's code.
 */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: string }).code ?? (error as { driverError?: { code?: string } }).driverError?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === '23505';
}
