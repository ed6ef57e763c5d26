import { Injectable, type NestMiddleware } from '@nestjs/common';
import express, { type NextFunction, type Request, type Response } from 'express';

/** The largest JSON body an admin route reads (a schedule or a trigger: a request text and a few fields). */
export const ADMIN_BODY_BYTES = 64 * 1024;

const parse = express.json({ limit: ADMIN_BODY_BYTES, strict: true });

/**
 * JSON bodies for the admin routes that take one (schedules and triggers; the service turns Nest's
 * parser off for /mcp, Chat and A2A, which read their own). A body past the limit is 413 and one that
 * is not JSON 400, answered here in the admin API's error shape before any route runs.
 */
@Injectable()
export class AdminJsonBody implements NestMiddleware {
  use(req: Request, res: Response, next: NextFunction): void {
    parse(req, res, (error?: unknown) => {
      if (!error) return next();
      const tooLarge = (error as { type?: string }).type === 'entity.too.large';
      res
        .status(tooLarge ? 413 : 400)
        .json(tooLarge ? { error: 'too_large', message: `the body is larger than ${ADMIN_BODY_BYTES} bytes` } : { error: 'invalid_input', message: 'the body is not valid JSON' });
    });
  }
}
