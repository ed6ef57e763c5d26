import { NotFoundException } from '@nestjs/common';

/** What an admin route found, or its 404 (Nest's own body, `{ message, error, statusCode }`, as the API has always answered). */
export function found<T>(value: T | null, message: string): T {
  if (value === null) throw new NotFoundException(message);
  return value;
}
