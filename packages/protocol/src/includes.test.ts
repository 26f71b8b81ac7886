import { describe, expect, it } from 'vitest';
import { referencedIds } from './includes.js';

describe('include paths', () => {
  const order = {
    Company: 'companies/1',
    Address: { Ref: 'addresses/1' },
    Lines: [{ Product: 'products/1' }, { Product: 'products/2' }, { Product: 7 }, {}],
    Tags: ['tags/a', 3, 'tags/b'],
    Count: 4,
  };

  it('follows fields, nested fields and every element of an array', () => {
    expect(referencedIds(order, 'Company')).toEqual(['companies/1']);
    expect(referencedIds(order, 'Address.Ref')).toEqual(['addresses/1']);
    expect(referencedIds(order, 'Lines[].Product')).toEqual(['products/1', 'products/2']);
    expect(referencedIds(order, 'Tags')).toEqual(['tags/a', 'tags/b']);
  });

  it('finds nothing where the path leads to no string, or nowhere', () => {
    for (const path of ['Count', 'Missing', 'Company.Name', 'Lines.Product', 'Address[].Ref', 'toString']) {
      expect(referencedIds(order, path)).toEqual([]);
    }
    expect(referencedIds(null, 'Company')).toEqual([]);
  });
});
