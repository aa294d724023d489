// @peculiar/x509 depends on tsyringe, which refuses to load unless a Reflect metadata API is
// installed (normally by the `reflect-metadata` package, which is not among our dependencies).
// This installs the four functions tsyringe calls, only when nothing provides them already.
// Import this module before @peculiar/x509.

type MetadataKey = unknown;
type PropertyKeyOrNone = string | symbol | undefined;

const store = new WeakMap<object, Map<PropertyKeyOrNone, Map<MetadataKey, unknown>>>();

function ownMap(
  target: object,
  property: PropertyKeyOrNone,
  create: boolean,
): Map<MetadataKey, unknown> | undefined {
  let byProperty = store.get(target);
  if (byProperty === undefined) {
    if (!create) return undefined;
    byProperty = new Map();
    store.set(target, byProperty);
  }
  let metadata = byProperty.get(property);
  if (metadata === undefined && create) {
    metadata = new Map();
    byProperty.set(property, metadata);
  }
  return metadata;
}

const reflectMetadataApi = {
  defineMetadata(
    key: MetadataKey,
    value: unknown,
    target: object,
    property?: string | symbol,
  ): void {
    ownMap(target, property, true)?.set(key, value);
  },
  hasOwnMetadata(key: MetadataKey, target: object, property?: string | symbol): boolean {
    return ownMap(target, property, false)?.has(key) ?? false;
  },
  getOwnMetadata(key: MetadataKey, target: object, property?: string | symbol): unknown {
    return ownMap(target, property, false)?.get(key);
  },
  getMetadata(key: MetadataKey, target: object, property?: string | symbol): unknown {
    // Metadata is inherited along the prototype chain, as reflect-metadata defines it.
    for (
      let current: object | null = target;
      current !== null;
      current = Object.getPrototypeOf(current) as object | null
    ) {
      const metadata = ownMap(current, property, false);
      if (metadata?.has(key) === true) return metadata.get(key);
    }
    return undefined;
  },
};

const reflect = Reflect as unknown as Record<string, unknown>;
if (typeof reflect['getMetadata'] !== 'function') {
  for (const [name, fn] of Object.entries(reflectMetadataApi)) reflect[name] = fn;
}
