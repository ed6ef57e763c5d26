import { Controller, Get, Header } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { readFileSync } from 'node:fs';

// The page is static; it calls the admin API with the same credentials (proxy identity or admin token).
const PAGE = readFileSync(new URL('../../public/admin.html', import.meta.url), 'utf8');

/** The audit review page. Public by itself: every piece of data it shows comes from guarded routes. */
@ApiExcludeController()
@Controller('admin')
export class AdminPageController {
  @Get()
  @Header('Content-Type', 'text/html; charset=utf-8')
  @Header('Content-Security-Policy', "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'")
  page(): string {
    return PAGE;
  }
}
