/**
 * The static files of the pages (`ui/assets/`): the style sheet, the icon, the shared script and one script per page,
 * read once when the service starts and served by name under `/ui/assets/` (no build step: the files are served as
 * they are written).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

/** A page asset: its content type and body. */
export interface Asset {
  contentType: string;
  body: string;
}

const TYPES: Readonly<Record<string, string>> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/** Every asset file, by name. */
const NAMES = [
  'ui.css',
  'favicon.svg',
  'common.js',
  'sign-in.js',
  'callback.js',
  'signup.js',
  'invitation.js',
  'password-reset.js',
  'account.js',
  'api-keys.js',
  'm2m.js',
  'connected-apps.js',
] as const;

/** The assets by name (read at start: a missing file stops the start). */
export const ASSETS: ReadonlyMap<string, Asset> = new Map(
  NAMES.map((name) => [
    name,
    {
      contentType: TYPES[path.extname(name)]!,
      body: readFileSync(path.join(import.meta.dirname, 'assets', name), 'utf8'),
    },
  ]),
);
