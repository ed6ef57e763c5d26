import { applyDecorators, Controller, Get, Header, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { installationFile } from '../common/installation.js';
import { AppConfig } from '../config/app-config.js';

const asset = (name: string) => readFileSync(installationFile('public', name), 'utf8');
// Static files, read once; the console calls the admin API with the same credentials (proxy identity or admin token).
const PAGE = asset('admin.html');
const SCRIPT = asset('console.js');
const VIEWS = asset('console-views.js');
const CONVERSATION = asset('console-conversation.js');
const AUTOMATION = asset('console-automation.js');
const STYLE = asset('console.css');
const ROOT = asset('index.html');
// The Markdown renderer and the sanitiser of the answers, served from their own npm packages (wherever npm
// put them). DOMPurify exports its browser build; marked does not, so it is found beside its package.json.
const dependency = createRequire(installationFile('package.json'));
const MARKED = readFileSync(join(dirname(dependency.resolve('marked/package.json')), 'lib/marked.umd.js'), 'utf8');
const PURIFY = readFileSync(dependency.resolve('dompurify/dist/purify.min.js'), 'utf8');

/** No inline script or style anywhere, nothing from another origin, no framing. */
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";
/** Every page and asset: never sniffed as another type, never framed (X-Frame-Options for browsers that ignore frame-ancestors). */
const HARDENING = { 'X-Content-Type-Options': 'nosniff', 'X-Frame-Options': 'DENY' };
const Served = (contentType: string) => applyDecorators(Header('Content-Type', contentType), ...Object.entries(HARDENING).map(([name, value]) => Header(name, value)));

/**
 * The admin console and the service's front page. Public by themselves: every piece of data the
 * console shows comes from guarded routes, and the page only carries the auth mode (so that in the
 * proxy modes it asks for no token, and in mode none it calls nothing until a token is tried).
 */
@ApiExcludeController()
@Controller()
export class AdminPageController {
  private readonly page: string;

  constructor(config: AppConfig) {
    this.page = PAGE.replace('{{AUTH_MODE}}', config.auth.mode);
  }

  /** The front page names the MCP URL this very request reached (the Host guard has vetted the Host header). */
  @Get()
  @Served('text/html; charset=utf-8')
  @Header('Content-Security-Policy', CSP)
  root(@Req() req: Request): string {
    return ROOT.replace('{{MCP_URL}}', escapeHtml(`${req.protocol}://${req.get('host') ?? 'localhost'}${req.baseUrl}/mcp`));
  }

  /** At `/admin/` the page's relative links would miss: it lives at `/admin` (also under a proxy's prefix). */
  @Get('admin')
  console(@Req() req: Request, @Res() res: Response): void {
    if (req.path.endsWith('/')) return res.redirect(301, '../admin');
    res.set({ 'Content-Type': 'text/html; charset=utf-8', 'Content-Security-Policy': CSP, 'Cache-Control': 'no-store', ...HARDENING }).send(this.page);
  }

  @Get('admin/console.js')
  @Served('text/javascript; charset=utf-8')
  script(): string {
    return SCRIPT;
  }

  @Get('admin/console-views.js')
  @Served('text/javascript; charset=utf-8')
  views(): string {
    return VIEWS;
  }

  @Get('admin/console-conversation.js')
  @Served('text/javascript; charset=utf-8')
  conversation(): string {
    return CONVERSATION;
  }

  @Get('admin/vendor/marked.js')
  @Served('text/javascript; charset=utf-8')
  marked(): string {
    return MARKED;
  }

  @Get('admin/vendor/purify.js')
  @Served('text/javascript; charset=utf-8')
  purify(): string {
    return PURIFY;
  }

  @Get('admin/console-automation.js')
  @Served('text/javascript; charset=utf-8')
  automation(): string {
    return AUTOMATION;
  }

  @Get('admin/console.css')
  @Served('text/css; charset=utf-8')
  style(): string {
    return STYLE;
  }
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
