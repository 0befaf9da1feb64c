/** Test support's migrated templates: which older templates a new one replaces (`staleTemplates`). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { staleTemplates } from '../support/platform.ts';

test("a new template replaces its own older ones and those of vanished checkouts, never another checkout's", () => {
  const label = 'api-suite test template of /work/a: media-buying';
  const rows = [
    { datname: 'tpl_old', label },
    { datname: 'tpl_b', label: 'api-suite test template of /work/b: media-buying' },
    { datname: 'tpl_gone', label: 'api-suite test template of /work/gone: media-buying, payments' },
    { datname: 'tpl_a_other', label: 'api-suite test template of /work/a: payments' },
    { datname: 'tpl_first', label: 'api-suite test template: media-buying' },
    { datname: 'tpl_foreign', label: 'somebody else' },
    { datname: 'tpl_unlabelled', label: null },
  ];
  const exists = (path: string) => path === '/work/a' || path === '/work/b';
  assert.deepEqual(
    staleTemplates(rows, label, exists).map((r) => r.datname),
    ['tpl_old', 'tpl_gone', 'tpl_first'],
  );
});
