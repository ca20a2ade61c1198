import { MalformedBodyError } from '../model/wire-errors';
import { jQueryToModelKey } from './jquery-keys';

describe('jQueryToModelKey', () => {
  it.each([
    ['financetype', 'financetype'],
    ['tags[]', 'tags'],
    ['[]', ''],
    ['[]tags', 'tags'],
    ['tags[][]', 'tags'],
    ['owner[name]', 'owner.name'],
    ['items[0][name]', 'items[0].name'],
    ['items[0].name', 'items[0].name'],
    ['items[][name]', 'items.name'],
    ['items[0x]', 'items[0x]'],
    ['items[\u0660]', 'items[\u0660]'],
    ['items[ 0]', 'items. 0'],
    ['a[b[c]', 'a.b[c'],
    ['a]b', 'a]b'],
    ['a[b]c[d]', 'a.bc.d'],
    ['a.b', 'a.b'],
    ['', ''],
  ])('rewrites %j as %j', (key, normal) => {
    expect(jQueryToModelKey(key)).toBe(normal);
  });

  it.each(['a[', 'a[b][c', '[', 'a]b[c'])('refuses %j, a [ left open', (key) => {
    expect(() => jQueryToModelKey(key)).toThrow(MalformedBodyError);
  });
});
