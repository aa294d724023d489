// Read-time CRD defaulting is computed once per stored object and schema: repeated reads share
// one defaulted object, and a new schema (a CRD update) defaults the stored object afresh.
import t from 'tap';
import type { JsonObject } from '../../shared/kube/json.js';
import { present } from '../../devcluster/api/resource-store.js';
import type { ResourceType } from '../../devcluster/resources/types.js';

function gadgetType(schema: JsonObject): ResourceType {
  return {
    group: 'example.olmq.io',
    version: 'v1',
    resource: 'gadgets',
    kind: 'Gadget',
    listKind: 'GadgetList',
    singular: 'gadget',
    namespaced: true,
    shortNames: [],
    categories: [],
    verbs: [],
    statusSubresource: false,
    extraSubresources: [],
    hasGeneration: true,
    virtual: false,
    columns: [],
    schema,
    crdName: 'gadgets.example.olmq.io',
    storageVersion: 'v1',
  };
}

const specWith = (properties: JsonObject): JsonObject => ({
  type: 'object',
  properties: { spec: { type: 'object', properties } },
});

t.test('read defaults are kept per stored object and schema', (t) => {
  const stored: JsonObject = {
    apiVersion: 'example.olmq.io/v1',
    kind: 'Gadget',
    metadata: { name: 'a', namespace: 'ns' },
    spec: { size: 1 },
  };
  const plain = gadgetType(specWith({ size: { type: 'integer' } }));
  t.equal(present(plain, stored), stored, 'nothing missing: the stored object itself');

  const withColour = gadgetType(
    specWith({ size: { type: 'integer' }, colour: { type: 'string', default: 'red' } }),
  );
  const first = present(withColour, stored);
  t.same(first['spec'], { size: 1, colour: 'red' }, 'the new default is served');
  t.equal(present(withColour, stored), first, 'a second read shares the first one');
  t.same(stored['spec'], { size: 1 }, 'the stored object is untouched');

  const blue = gadgetType(
    specWith({ size: { type: 'integer' }, colour: { type: 'string', default: 'blue' } }),
  );
  t.same(
    present(blue, stored)['spec'],
    { size: 1, colour: 'blue' },
    'a new schema defaults afresh',
  );
  t.same(
    JSON.parse(JSON.stringify(stored)),
    {
      apiVersion: 'example.olmq.io/v1',
      kind: 'Gadget',
      metadata: { name: 'a', namespace: 'ns' },
      spec: { size: 1 },
    },
    'the memo is not part of the JSON',
  );
  t.end();
});
