// Resolution scenarios as a table: small File-Based Catalogs built in the test (run through
// buildCatalogIndex like any catalog), a namespace snapshot, and the exact outcome expected.
// Real-catalog scenarios live in resolver-real.test.ts.
import t from 'tap';
import { buildCatalogFromTexts, type CatalogIndex } from '../../shared/catalog/index.js';
import {
  resolveNamespace,
  subscriptionFacts,
  type InstalledCsvFacts,
  type OperatorGroupFacts,
  type Resolution,
  type ResolverCatalog,
  type SubscriptionFacts,
} from '../../shared/resolver/index.js';

// ---- a tiny catalog language -----------------------------------------------------------------

/** A bundle: GVKs as "Kind.version.group". */
interface B {
  name: string;
  version: string;
  replaces?: string;
  skips?: string[];
  skipRange?: string;
  provides?: string[];
  requires?: string[];
  requiresPackage?: [string, string][];
  constraints?: unknown[];
  properties?: { type: string; value: unknown }[];
  installModes?: string[];
}

/** A package: channels list their entries (any order); the default channel is named. */
interface P {
  name: string;
  defaultChannel: string;
  channels: Record<string, B[]>;
}

function gvk(text: string): { kind: string; version: string; group: string } {
  const [kind = '', version = '', ...group] = text.split('.');
  return { kind, version, group: group.join('.') };
}

function catalogIndex(packages: P[]): CatalogIndex {
  const objects: object[] = [];
  for (const p of packages) {
    objects.push({ schema: 'olm.package', name: p.name, defaultChannel: p.defaultChannel });
    const bundles = new Map<string, B>();
    for (const [channel, entries] of Object.entries(p.channels)) {
      objects.push({
        schema: 'olm.channel',
        package: p.name,
        name: channel,
        entries: entries.map((b) => ({
          name: b.name,
          ...(b.replaces === undefined ? {} : { replaces: b.replaces }),
          ...(b.skips === undefined ? {} : { skips: b.skips }),
          ...(b.skipRange === undefined ? {} : { skipRange: b.skipRange }),
        })),
      });
      for (const b of entries) if (!bundles.has(b.name)) bundles.set(b.name, b);
    }
    for (const b of bundles.values()) {
      objects.push({
        schema: 'olm.bundle',
        package: p.name,
        name: b.name,
        image: `example.com/${b.name}:latest`,
        properties: [
          { type: 'olm.package', value: { packageName: p.name, version: b.version } },
          ...(b.provides ?? []).map((g) => ({ type: 'olm.gvk', value: gvk(g) })),
          ...(b.requires ?? []).map((g) => ({ type: 'olm.gvk.required', value: gvk(g) })),
          ...(b.requiresPackage ?? []).map(([packageName, versionRange]) => ({
            type: 'olm.package.required',
            value: { packageName, versionRange },
          })),
          ...(b.constraints ?? []).map((value) => ({ type: 'olm.constraint', value })),
          ...(b.properties ?? []),
          {
            type: 'olm.csv.metadata',
            value: {
              installModes: (b.installModes ?? ['AllNamespaces', 'OwnNamespace']).map((type) => ({
                type,
                supported: true,
              })),
            },
          },
        ],
      });
    }
  }
  return buildCatalogFromTexts({
    'catalog.json': objects.map((o) => JSON.stringify(o)).join('\n'),
  }).index;
}

interface CatalogSpec {
  name: string;
  namespace?: string;
  priority?: number;
  packages?: P[];
  unavailable?: boolean;
}

interface SubSpec {
  name: string;
  package?: string;
  channel?: string;
  source?: string;
  sourceNamespace?: string;
  startingCSV?: string;
  installedCSV?: string;
}

interface CsvSpec {
  name: string;
  version: string;
  /** Package for the properties annotation; omit `annotated` to leave the annotation out. */
  package?: string;
  annotated?: boolean;
  provides?: string[];
  requires?: string[];
  requiresPackage?: [string, string][];
}

interface Scenario {
  name: string;
  catalogs: CatalogSpec[];
  subs: SubSpec[];
  installed?: CsvSpec[];
  operatorGroups?: OperatorGroupFacts[];
  namespace?: string;
  /** "subscription|-:action:csv[<replaced]@catalog", in output order. */
  bundles: string[];
  /** Problems expected: subscription (or null) and what the message must contain. */
  problems?: [string | null, RegExp][];
  warnings?: RegExp[];
}

function installedCsv(c: CsvSpec): InstalledCsvFacts {
  const props = [
    ...(c.package === undefined
      ? []
      : [{ type: 'olm.package', value: { packageName: c.package, version: c.version } }]),
    ...(c.provides ?? []).map((g) => ({ type: 'olm.gvk', value: gvk(g) })),
    ...(c.requires ?? []).map((g) => ({ type: 'olm.gvk.required', value: gvk(g) })),
    ...(c.requiresPackage ?? []).map(([packageName, versionRange]) => ({
      type: 'olm.package.required',
      value: { packageName, versionRange },
    })),
  ];
  return {
    name: c.name,
    version: c.version,
    properties: c.annotated === false ? null : props,
    ownedApis: (c.provides ?? []).map(gvk),
    requiredApis: (c.requires ?? []).map(gvk),
  };
}

function run(s: Scenario): Resolution {
  const namespace = s.namespace ?? 'ns';
  const catalogs: ResolverCatalog[] = s.catalogs.map((c) => ({
    name: c.name,
    namespace: c.namespace ?? 'olm',
    priority: c.priority ?? 0,
    index: c.unavailable === true ? null : catalogIndex(c.packages ?? []),
    ...(c.unavailable === true ? { unavailableReason: 'registry pod not ready' } : {}),
  }));
  const subscriptions: SubscriptionFacts[] = s.subs.map((sub) => ({
    name: sub.name,
    package: sub.package ?? sub.name,
    channel: sub.channel ?? null,
    source: { name: sub.source ?? 'cat', namespace: sub.sourceNamespace ?? 'olm' },
    startingCSV: sub.startingCSV ?? null,
    installedCSV: sub.installedCSV ?? null,
  }));
  return resolveNamespace({
    namespace,
    subscriptions,
    installed: (s.installed ?? []).map(installedCsv),
    operatorGroups: s.operatorGroups ?? null,
    catalogs,
  });
}

function compact(r: Resolution): string[] {
  return r.bundles.map(
    (b) =>
      `${b.subscription ?? '-'}:${b.action}:${b.name}${b.replaces === null ? '' : `<${b.replaces}`}@${b.catalog.name}`,
  );
}

// ---- packages used by many scenarios -----------------------------------------------------------

const a10: B = { name: 'a.v1.0.0', version: '1.0.0' };
const a11: B = { name: 'a.v1.1.0', version: '1.1.0', replaces: 'a.v1.0.0' };
const a12: B = { name: 'a.v1.2.0', version: '1.2.0', replaces: 'a.v1.1.0' };
const alpha: P = {
  name: 'a',
  defaultChannel: 'stable',
  channels: {
    stable: [a10, a11, a12],
    fast: [a10, a11, a12, { name: 'a.v2.0.0', version: '2.0.0', replaces: 'a.v1.2.0' }],
    legacy: [{ name: 'a.v0.9.0', version: '0.9.0' }],
  },
};

const widgets = (name: string, version = '1.0.0', kind = 'Widget.v1.example.com'): P => ({
  name,
  defaultChannel: 'stable',
  channels: { stable: [{ name: `${name}.v${version}`, version, provides: [kind] }] },
});

const dep: P = {
  name: 'dep',
  defaultChannel: 'stable',
  channels: {
    stable: [
      { name: 'dep.v1.0.0', version: '1.0.0' },
      { name: 'dep.v1.5.0', version: '1.5.0', replaces: 'dep.v1.0.0' },
      { name: 'dep.v2.0.0', version: '2.0.0', replaces: 'dep.v1.5.0' },
    ],
  },
};

const needs = (name: string, extra: Partial<B>, version = '1.0.0'): P => ({
  name,
  defaultChannel: 'stable',
  channels: { stable: [{ name: `${name}.v${version}`, version, ...extra }] },
});

const scenarios: Scenario[] = [
  // -- install ----------------------------------------------------------------------------------
  {
    name: 'fresh install takes the head of the default channel',
    catalogs: [{ name: 'cat', packages: [alpha] }],
    subs: [{ name: 'a' }],
    bundles: ['a:install:a.v1.2.0@cat'],
  },
  {
    name: 'fresh install on an explicit channel takes that channel head',
    catalogs: [{ name: 'cat', packages: [alpha] }],
    subs: [{ name: 'a', channel: 'fast' }],
    bundles: ['a:install:a.v2.0.0@cat'],
  },
  {
    name: 'default channel is preferred over channels sorting first by name',
    catalogs: [
      {
        name: 'cat',
        packages: [
          {
            name: 'a',
            defaultChannel: 'stable',
            channels: {
              aaa: [{ name: 'a.v9.0.0', version: '9.0.0' }],
              stable: [{ name: 'a.v1.0.0', version: '1.0.0' }],
            },
          },
        ],
      },
    ],
    subs: [{ name: 'a' }],
    bundles: ['a:install:a.v1.0.0@cat'],
  },
  {
    name: 'startingCSV installs that version, not the head',
    catalogs: [{ name: 'cat', packages: [alpha] }],
    subs: [{ name: 'a', channel: 'stable', startingCSV: 'a.v1.1.0' }],
    bundles: ['a:install:a.v1.1.0@cat'],
  },
  {
    name: 'startingCSV is ignored once a CSV is installed',
    catalogs: [{ name: 'cat', packages: [alpha] }],
    subs: [{ name: 'a', channel: 'stable', startingCSV: 'a.v1.0.0', installedCSV: 'a.v1.1.0' }],
    installed: [{ name: 'a.v1.1.0', version: '1.1.0', package: 'a' }],
    bundles: ['a:upgrade:a.v1.2.0<a.v1.1.0@cat'],
  },
  {
    name: 'startingCSV missing from the channel is a problem naming it',
    catalogs: [{ name: 'cat', packages: [alpha] }],
    subs: [{ name: 'a', channel: 'stable', startingCSV: 'a.v3.0.0' }],
    bundles: [],
    problems: [['a', /no operators found with name a\.v3\.0\.0 in channel stable of package a/]],
  },
  {
    name: 'manual approval does not change what resolves (approval is the plan’s concern)',
    catalogs: [{ name: 'cat', packages: [alpha] }],
    subs: [{ name: 'a' }],
    bundles: ['a:install:a.v1.2.0@cat'],
  },
  // -- upgrades ---------------------------------------------------------------------------------
  {
    name: 'upgrade follows one replaces edge at a time',
    catalogs: [{ name: 'cat', packages: [alpha] }],
    subs: [{ name: 'a', channel: 'stable', installedCSV: 'a.v1.0.0' }],
    installed: [{ name: 'a.v1.0.0', version: '1.0.0', package: 'a' }],
    bundles: ['a:upgrade:a.v1.1.0<a.v1.0.0@cat'],
  },
  {
    name: 'installed head is kept',
    catalogs: [{ name: 'cat', packages: [alpha] }],
    subs: [{ name: 'a', channel: 'stable', installedCSV: 'a.v1.2.0' }],
    installed: [{ name: 'a.v1.2.0', version: '1.2.0', package: 'a' }],
    bundles: ['a:keep:a.v1.2.0@cat'],
  },
  {
    name: 'skips jump over the skipped bundle',
    catalogs: [
      {
        name: 'cat',
        packages: [
          {
            name: 'a',
            defaultChannel: 'stable',
            channels: {
              stable: [
                a10,
                a11,
                a12,
                { name: 'a.v1.3.0', version: '1.3.0', replaces: 'a.v1.2.0', skips: ['a.v1.1.0'] },
              ],
            },
          },
        ],
      },
    ],
    subs: [{ name: 'a', installedCSV: 'a.v1.1.0' }],
    installed: [{ name: 'a.v1.1.0', version: '1.1.0', package: 'a' }],
    bundles: ['a:upgrade:a.v1.3.0<a.v1.1.0@cat'],
  },
  {
    name: 'skipRange upgrades any version it contains',
    catalogs: [
      {
        name: 'cat',
        packages: [
          {
            name: 'a',
            defaultChannel: 'stable',
            channels: {
              stable: [a10, { name: 'a.v2.0.0', version: '2.0.0', skipRange: '>=1.0.0 <2.0.0' }],
            },
          },
        ],
      },
    ],
    subs: [{ name: 'a', installedCSV: 'a.v1.0.0' }],
    installed: [{ name: 'a.v1.0.0', version: '1.0.0', package: 'a' }],
    bundles: ['a:upgrade:a.v2.0.0<a.v1.0.0@cat'],
  },
  {
    name: 'skipRange upgrades an installed CSV the catalog no longer lists',
    catalogs: [
      {
        name: 'cat',
        packages: [
          {
            name: 'a',
            defaultChannel: 'stable',
            channels: { stable: [{ name: 'a.v2.0.0', version: '2.0.0', skipRange: '<2.0.0' }] },
          },
        ],
      },
    ],
    subs: [{ name: 'a', installedCSV: 'a.v0.1.0' }],
    installed: [{ name: 'a.v0.1.0', version: '0.1.0', package: 'a' }],
    bundles: ['a:upgrade:a.v2.0.0<a.v0.1.0@cat'],
  },
  {
    name: 'channel switch follows an edge from the installed CSV into the new channel',
    catalogs: [{ name: 'cat', packages: [alpha] }],
    subs: [{ name: 'a', channel: 'fast', installedCSV: 'a.v1.2.0' }],
    installed: [{ name: 'a.v1.2.0', version: '1.2.0', package: 'a' }],
    bundles: ['a:upgrade:a.v2.0.0<a.v1.2.0@cat'],
  },
  {
    name: 'channel switch without an edge from the installed CSV keeps it (never to an older channel)',
    catalogs: [{ name: 'cat', packages: [alpha] }],
    subs: [{ name: 'a', channel: 'legacy', installedCSV: 'a.v1.2.0' }],
    installed: [{ name: 'a.v1.2.0', version: '1.2.0', package: 'a' }],
    bundles: ['a:keep:a.v1.2.0@cat'],
  },
  {
    name: 'installed CSV without properties annotation: package inferred from its Subscription',
    catalogs: [{ name: 'cat', packages: [alpha] }],
    subs: [{ name: 'a', channel: 'stable', installedCSV: 'a.v1.1.0' }],
    installed: [{ name: 'a.v1.1.0', version: '1.1.0', annotated: false }],
    bundles: ['a:upgrade:a.v1.2.0<a.v1.1.0@cat'],
  },
  {
    name: 'a deprecated head is never picked: the next in the chain is',
    catalogs: [
      {
        name: 'cat',
        packages: [
          {
            name: 'a',
            defaultChannel: 'stable',
            channels: {
              stable: [
                a10,
                {
                  ...a11,
                  properties: [{ type: 'olm.deprecated', value: {} }],
                },
              ],
            },
          },
        ],
      },
    ],
    subs: [{ name: 'a' }],
    bundles: ['a:install:a.v1.0.0@cat'],
  },
  // -- missing things ---------------------------------------------------------------------------
  {
    name: 'missing package is a problem that names package and catalog',
    catalogs: [{ name: 'cat', packages: [alpha] }],
    subs: [{ name: 'x', package: 'nope' }],
    bundles: [],
    problems: [
      ['x', /no operators found in package nope in the catalog referenced by subscription x/],
    ],
  },
  {
    name: 'missing channel is a problem that lists the channels',
    catalogs: [{ name: 'cat', packages: [alpha] }],
    subs: [{ name: 'a', channel: 'beta' }],
    bundles: [],
    problems: [
      [
        'a',
        /no operators found in channel beta of package a .*channels are fast, legacy, stable \(default stable\)/,
      ],
    ],
  },
  {
    name: 'missing catalog is a problem that lists the visible ones',
    catalogs: [{ name: 'cat', packages: [alpha] }],
    subs: [{ name: 'a', source: 'other' }],
    bundles: [],
    problems: [['a', /no operators found from catalog other in namespace olm .*visible: cat\/olm/]],
  },
  // -- dependencies -----------------------------------------------------------------------------
  {
    name: 'package dependency with a range installs the newest matching version',
    catalogs: [
      {
        name: 'cat',
        packages: [needs('b', { requiresPackage: [['dep', '>=1.0.0 <2.0.0']] }), dep],
      },
    ],
    subs: [{ name: 'b' }],
    bundles: ['b:install:b.v1.0.0@cat', '-:install:dep.v1.5.0@cat'],
  },
  {
    name: 'GVK dependency installs its provider',
    catalogs: [
      {
        name: 'cat',
        packages: [needs('b', { requires: ['Widget.v1.example.com'] }), widgets('w')],
      },
    ],
    subs: [{ name: 'b' }],
    bundles: ['b:install:b.v1.0.0@cat', '-:install:w.v1.0.0@cat'],
  },
  {
    name: 'GVK dependency already provided by an installed CSV installs nothing more',
    catalogs: [
      {
        name: 'cat',
        packages: [needs('b', { requires: ['Widget.v1.example.com'] }), widgets('w', '2.0.0')],
      },
    ],
    subs: [{ name: 'b' }],
    installed: [
      { name: 'w.v1.0.0', version: '1.0.0', package: 'w', provides: ['Widget.v1.example.com'] },
    ],
    bundles: ['b:install:b.v1.0.0@cat'],
  },
  {
    name: 'transitive dependencies are all installed',
    catalogs: [
      {
        name: 'cat',
        packages: [
          needs('b', { requires: ['Widget.v1.example.com'] }),
          {
            ...widgets('w'),
            channels: {
              stable: [
                {
                  name: 'w.v1.0.0',
                  version: '1.0.0',
                  provides: ['Widget.v1.example.com'],
                  requiresPackage: [['dep', '>=2.0.0']],
                },
              ],
            },
          },
          dep,
        ],
      },
    ],
    subs: [{ name: 'b' }],
    bundles: ['b:install:b.v1.0.0@cat', '-:install:dep.v2.0.0@cat', '-:install:w.v1.0.0@cat'],
  },
  {
    name: 'several providers of a dependency: default channel, then package name',
    catalogs: [
      {
        name: 'cat',
        packages: [
          needs('b', { requires: ['Widget.v1.example.com'] }),
          widgets('zeta'),
          widgets('alpha-w'),
        ],
      },
    ],
    subs: [{ name: 'b' }],
    bundles: ['b:install:b.v1.0.0@cat', '-:install:alpha-w.v1.0.0@cat'],
  },
  {
    name: 'olm.label.required is satisfied by a bundle with that olm.label',
    catalogs: [
      {
        name: 'cat',
        packages: [
          needs('b', { properties: [{ type: 'olm.label.required', value: { label: 'fast-db' } }] }),
          needs('db', { properties: [{ type: 'olm.label', value: { label: 'fast-db' } }] }),
        ],
      },
    ],
    subs: [{ name: 'b' }],
    bundles: ['b:install:b.v1.0.0@cat', '-:install:db.v1.0.0@cat'],
  },
  {
    name: 'olm.constraint any: the first satisfiable alternative',
    catalogs: [
      {
        name: 'cat',
        packages: [
          needs('b', {
            constraints: [
              {
                any: {
                  constraints: [
                    { gvk: gvk('Gadget.v1.example.com') },
                    { package: { packageName: 'dep', versionRange: '<1.2.0' } },
                  ],
                },
              },
            ],
          }),
          dep,
        ],
      },
    ],
    subs: [{ name: 'b' }],
    bundles: ['b:install:b.v1.0.0@cat', '-:install:dep.v1.0.0@cat'],
  },
  {
    name: 'olm.constraint all/not: a package except a version range',
    catalogs: [
      {
        name: 'cat',
        packages: [
          needs('b', {
            constraints: [
              {
                all: {
                  constraints: [
                    { package: { packageName: 'dep', versionRange: '>=1.0.0' } },
                    {
                      not: {
                        constraints: [{ package: { packageName: 'dep', versionRange: '>=2.0.0' } }],
                      },
                    },
                  ],
                },
              },
            ],
          }),
          dep,
        ],
      },
    ],
    subs: [{ name: 'b' }],
    bundles: ['b:install:b.v1.0.0@cat', '-:install:dep.v1.5.0@cat'],
  },
  {
    name: 'olm.constraint cel: a rule over properties with semver_compare',
    catalogs: [
      {
        name: 'cat',
        packages: [
          needs('b', {
            constraints: [
              {
                cel: {
                  rule: 'properties.exists(p, p.type == "olm.package" && p.value.packageName == "dep" && semver_compare(p.value.version, "1.2.0") < 0)',
                },
              },
            ],
          }),
          dep,
        ],
      },
    ],
    subs: [{ name: 'b' }],
    bundles: ['b:install:b.v1.0.0@cat', '-:install:dep.v1.0.0@cat'],
  },
  {
    name: 'olm.constraint cel: a rule that does not parse makes the bundle unusable',
    catalogs: [
      {
        name: 'cat',
        packages: [needs('b', { constraints: [{ cel: { rule: 'properties.exists(p,' } }] }), dep],
      },
    ],
    subs: [{ name: 'b' }],
    bundles: [],
    problems: [['b', /olm\.constraint\.cel: invalid rule/]],
  },
  {
    name: 'olm.constraint with an unknown field makes the bundle unusable, saying why',
    catalogs: [{ name: 'cat', packages: [needs('b', { constraints: [{ unknown: {} }] })] }],
    subs: [{ name: 'b' }],
    bundles: [],
    problems: [
      ['b', /bundle b\.v1\.0\.0 has an unusable dependency: json: unknown field "unknown"/],
    ],
  },
  {
    name: 'olm.constraint failureMessage appears in the explanation',
    catalogs: [
      {
        name: 'cat',
        packages: [
          needs('b', {
            constraints: [
              { failureMessage: 'needs a Gadget operator', gvk: gvk('Gadget.v1.example.com') },
            ],
          }),
        ],
      },
    ],
    subs: [{ name: 'b' }],
    bundles: [],
    problems: [['b', /"needs a Gadget operator"/]],
  },
  {
    name: 'unsatisfiable: a required API nobody provides, explained with the catalogs searched',
    catalogs: [{ name: 'cat', packages: [needs('b', { requires: ['Gadget.v1.example.com'] })] }],
    subs: [{ name: 'b' }],
    bundles: [],
    problems: [
      [
        'b',
        /bundle b\.v1\.0\.0 requires an operator providing Gadget \(example\.com\/v1\), which no catalog visible to namespace ns \(olm\/cat\) provides.*Add a CatalogSource/,
      ],
    ],
  },
  {
    name: 'isolation: a Subscription with a missing dependency does not block others',
    catalogs: [
      { name: 'cat', packages: [needs('b', { requires: ['Gadget.v1.example.com'] }), alpha] },
    ],
    subs: [{ name: 'b' }, { name: 'a' }],
    bundles: ['a:install:a.v1.2.0@cat'],
    problems: [['b', /Gadget/]],
  },
  {
    name: 'a dependency older than the head is chosen when the head lacks what is needed',
    catalogs: [
      {
        name: 'cat',
        packages: [
          needs('b', { requires: ['Widget.v1.example.com'] }),
          {
            name: 'w',
            defaultChannel: 'stable',
            channels: {
              stable: [
                { name: 'w.v1.0.0', version: '1.0.0', provides: ['Widget.v1.example.com'] },
                {
                  name: 'w.v2.0.0',
                  version: '2.0.0',
                  replaces: 'w.v1.0.0',
                  provides: ['Widget.v2.example.com'],
                },
              ],
            },
          },
        ],
      },
    ],
    subs: [{ name: 'b' }],
    bundles: ['b:install:b.v1.0.0@cat', '-:install:w.v1.0.0@cat'],
  },
  // -- conflicts --------------------------------------------------------------------------------
  {
    name: 'two providers of one API cannot both be installed',
    catalogs: [{ name: 'cat', packages: [widgets('w1'), widgets('w2')] }],
    subs: [{ name: 'w1' }, { name: 'w2' }],
    bundles: [],
    problems: [
      [
        'w1',
        /subscriptions w1 and w2 need incompatible operators: there can be only one provider of Widget \(example\.com\/v1\)/,
      ],
      ['w2', /subscriptions w2 and w1 need incompatible operators/],
    ],
  },
  {
    name: 'two Subscriptions that one bundle satisfies share it',
    catalogs: [{ name: 'cat', packages: [alpha] }],
    subs: [
      { name: 'a1', package: 'a' },
      { name: 'a2', package: 'a', channel: 'fast' },
    ],
    bundles: ['a1:install:a.v2.0.0@cat', 'a2:install:a.v2.0.0@cat'],
  },
  {
    name: 'two Subscriptions to one package on different channels conflict',
    catalogs: [{ name: 'cat', packages: [alpha] }],
    subs: [
      { name: 'a1', package: 'a', channel: 'stable' },
      { name: 'a2', package: 'a', channel: 'fast' },
    ],
    bundles: [],
    problems: [
      ['a1', /there can be only one operator from package a/],
      ['a2', /there can be only one operator from package a/],
    ],
  },
  {
    name: 'two Subscriptions needing incompatible versions of a dependency',
    catalogs: [
      { name: 'cat', packages: [needs('b', { requiresPackage: [['dep', '<2.0.0']] }), dep] },
    ],
    subs: [{ name: 'b' }, { name: 'dep', startingCSV: 'dep.v2.0.0' }],
    bundles: [],
    problems: [
      [
        'b',
        /subscriptions b and dep need incompatible operators: there can be only one operator from package dep/,
      ],
      ['dep', /subscriptions dep and b/],
    ],
  },
  {
    name: 'isolation: a conflict between two Subscriptions leaves a third one resolving',
    catalogs: [{ name: 'cat', packages: [widgets('w1'), widgets('w2'), alpha] }],
    subs: [{ name: 'w1' }, { name: 'w2' }, { name: 'a' }],
    bundles: ['a:install:a.v1.2.0@cat'],
    problems: [
      ['w1', /Widget/],
      ['w2', /Widget/],
    ],
  },
  {
    name: 'installed CSV without a Subscription blocks a Subscription to its package',
    catalogs: [{ name: 'cat', packages: [alpha] }],
    subs: [{ name: 'a' }],
    installed: [{ name: 'a.v1.0.0', version: '1.0.0', package: 'a' }],
    bundles: [],
    problems: [
      [
        'a',
        /conflicts with clusterserviceversion a\.v1\.0\.0, installed in the namespace without a Subscription.*clusterserviceversion a\.v1\.0\.0 exists and is not referenced by a subscription/,
      ],
    ],
  },
  {
    name: 'installed CSV without a Subscription of another package coexists',
    catalogs: [{ name: 'cat', packages: [alpha] }],
    subs: [{ name: 'a' }],
    installed: [{ name: 'other.v1.0.0', version: '1.0.0', package: 'other' }],
    bundles: ['a:install:a.v1.2.0@cat'],
  },
  {
    name: 'installed CSVs that already break a rule are reported for the namespace, others resolve',
    catalogs: [{ name: 'cat', packages: [alpha] }],
    subs: [{ name: 'a' }],
    installed: [
      {
        name: 'lonely.v1.0.0',
        version: '1.0.0',
        package: 'lonely',
        requires: ['Gadget.v1.example.com'],
      },
    ],
    bundles: ['a:install:a.v1.2.0@cat'],
    problems: [
      [
        null,
        /installed operators already break a resolution rule: .*lonely\.v1\.0\.0 requires an operator providing Gadget/,
      ],
    ],
  },
  // -- catalog preference -----------------------------------------------------------------------
  {
    name: 'catalog priority decides between providers in other catalogs',
    catalogs: [
      { name: 'main', packages: [needs('b', { requires: ['Widget.v1.example.com'] })] },
      { name: 'low', priority: 0, packages: [widgets('w-low')] },
      { name: 'high', priority: 10, packages: [widgets('w-high')] },
    ],
    subs: [{ name: 'b', source: 'main' }],
    bundles: ['b:install:b.v1.0.0@main', '-:install:w-high.v1.0.0@high'],
  },
  {
    name: "the depending bundle's own catalog wins over a higher priority",
    catalogs: [
      {
        name: 'main',
        packages: [needs('b', { requires: ['Widget.v1.example.com'] }), widgets('w-main')],
      },
      { name: 'high', priority: 10, packages: [widgets('w-high')] },
    ],
    subs: [{ name: 'b', source: 'main' }],
    bundles: ['b:install:b.v1.0.0@main', '-:install:w-main.v1.0.0@main'],
  },
  {
    name: "same priority: the namespace's own catalog before the global one",
    namespace: 'team',
    catalogs: [
      {
        name: 'main',
        namespace: 'team',
        packages: [needs('b', { requires: ['Widget.v1.example.com'] })],
      },
      { name: 'a-global', namespace: 'olm', packages: [widgets('w-global')] },
      { name: 'z-local', namespace: 'team', packages: [widgets('w-local')] },
    ],
    subs: [{ name: 'b', source: 'main', sourceNamespace: 'team' }],
    bundles: ['b:install:b.v1.0.0@main', '-:install:w-local.v1.0.0@z-local'],
  },
  {
    name: 'unhealthy catalog isolation: its Subscription fails, the others resolve',
    catalogs: [
      { name: 'cat', packages: [alpha] },
      { name: 'down', unavailable: true },
    ],
    subs: [{ name: 'a' }, { name: 'x', source: 'down' }],
    bundles: ['a:install:a.v1.2.0@cat'],
    problems: [
      [
        'x',
        /catalog source olm\/down referenced by subscription x is unavailable: registry pod not ready/,
      ],
    ],
  },
  // -- keeping dependents working ---------------------------------------------------------------
  {
    name: 'dependent protection: an upgrade that would break an installed dependent is held back',
    catalogs: [
      {
        name: 'cat',
        packages: [
          {
            name: 'dep',
            defaultChannel: 'stable',
            channels: {
              stable: [
                { name: 'dep.v1.0.0', version: '1.0.0' },
                { name: 'dep.v2.0.0', version: '2.0.0', replaces: 'dep.v1.0.0' },
              ],
            },
          },
          needs('b', { requiresPackage: [['dep', '<2.0.0']] }),
        ],
      },
    ],
    subs: [
      { name: 'b', installedCSV: 'b.v1.0.0' },
      { name: 'dep', installedCSV: 'dep.v1.0.0' },
    ],
    installed: [
      { name: 'b.v1.0.0', version: '1.0.0', package: 'b', requiresPackage: [['dep', '<2.0.0']] },
      { name: 'dep.v1.0.0', version: '1.0.0', package: 'dep' },
    ],
    bundles: ['b:keep:b.v1.0.0@cat', 'dep:keep:dep.v1.0.0@cat'],
  },
  {
    name: 'deadlock: mutually dependent operators upgrade together in one resolution',
    catalogs: [
      {
        name: 'cat',
        packages: [
          {
            name: 'x',
            defaultChannel: 'stable',
            channels: {
              stable: [
                { name: 'x.v1.0.0', version: '1.0.0', provides: ['X.v1.example.com'] },
                {
                  name: 'x.v2.0.0',
                  version: '2.0.0',
                  replaces: 'x.v1.0.0',
                  provides: ['X.v2.example.com'],
                  requires: ['Y.v2.example.com'],
                },
              ],
            },
          },
          {
            name: 'y',
            defaultChannel: 'stable',
            channels: {
              stable: [
                { name: 'y.v1.0.0', version: '1.0.0', provides: ['Y.v1.example.com'] },
                {
                  name: 'y.v2.0.0',
                  version: '2.0.0',
                  replaces: 'y.v1.0.0',
                  provides: ['Y.v2.example.com'],
                  requires: ['X.v2.example.com'],
                },
              ],
            },
          },
        ],
      },
    ],
    subs: [
      { name: 'x', installedCSV: 'x.v1.0.0' },
      { name: 'y', installedCSV: 'y.v1.0.0' },
    ],
    installed: [
      { name: 'x.v1.0.0', version: '1.0.0', package: 'x', provides: ['X.v1.example.com'] },
      { name: 'y.v1.0.0', version: '1.0.0', package: 'y', provides: ['Y.v1.example.com'] },
    ],
    bundles: ['x:upgrade:x.v2.0.0<x.v1.0.0@cat', 'y:upgrade:y.v2.0.0<y.v1.0.0@cat'],
  },
  {
    name: 'an upgrade whose requirement nobody can meet keeps the installed CSV',
    catalogs: [
      {
        name: 'cat',
        packages: [
          {
            name: 'x',
            defaultChannel: 'stable',
            channels: {
              stable: [
                { name: 'x.v1.0.0', version: '1.0.0' },
                {
                  name: 'x.v2.0.0',
                  version: '2.0.0',
                  replaces: 'x.v1.0.0',
                  requires: ['Crd1.v1.example.com'],
                },
              ],
            },
          },
        ],
      },
    ],
    subs: [{ name: 'x', installedCSV: 'x.v1.0.0' }],
    installed: [{ name: 'x.v1.0.0', version: '1.0.0', package: 'x' }],
    bundles: ['x:keep:x.v1.0.0@cat'],
  },
  {
    name: 'a dependency upgrade needed by a new dependent upgrades the installed dependency',
    catalogs: [
      { name: 'cat', packages: [needs('b', { requiresPackage: [['dep', '>=2.0.0']] }), dep] },
    ],
    subs: [{ name: 'b' }, { name: 'dep', installedCSV: 'dep.v1.5.0' }],
    installed: [{ name: 'dep.v1.5.0', version: '1.5.0', package: 'dep' }],
    bundles: ['b:install:b.v1.0.0@cat', 'dep:upgrade:dep.v2.0.0<dep.v1.5.0@cat'],
  },
  // -- OperatorGroups ---------------------------------------------------------------------------
  {
    name: 'no OperatorGroup: the namespace cannot be resolved',
    catalogs: [{ name: 'cat', packages: [alpha] }],
    subs: [{ name: 'a' }],
    operatorGroups: [],
    bundles: [],
    problems: [[null, /^found 0 operatorGroups, expected 1$/]],
  },
  {
    name: 'install modes the OperatorGroup asks for but the bundle lacks are a warning, as upstream installs anyway',
    catalogs: [{ name: 'cat', packages: [needs('b', { installModes: ['AllNamespaces'] })] }],
    subs: [{ name: 'b' }],
    operatorGroups: [{ name: 'og', excludeGlobalCatalogs: false, installMode: 'OwnNamespace' }],
    bundles: ['b:install:b.v1.0.0@cat'],
    warnings: [/bundle b\.v1\.0\.0 does not support install mode OwnNamespace of OperatorGroup og/],
  },
];

t.test('resolver scenarios - at least 40', (t) => {
  t.ok(scenarios.length >= 40, `${scenarios.length} scenarios`);
  t.end();
});

for (const s of scenarios) {
  t.test(`resolver - ${s.name}`, (t) => {
    const r = run(s);
    t.same(compact(r), s.bundles, 'bundles');
    const expected = s.problems ?? [];
    t.equal(r.status, expected.length === 0 ? 'resolved' : 'unsatisfiable', 'status');
    t.equal(
      r.problems.length,
      expected.length,
      `problems: ${r.problems.map((p) => p.message).join(' | ')}`,
    );
    for (const [sub, re] of expected) {
      const p = r.problems.find((q) => q.subscription === sub && re.test(q.message));
      t.ok(
        p,
        `a problem for ${sub ?? 'the namespace'} matching ${re}: ${r.problems.map((q) => `${q.subscription}: ${q.message}`).join(' | ')}`,
      );
    }
    for (const re of s.warnings ?? [])
      t.ok(
        r.warnings.some((w) => re.test(w.message)),
        `warning ${re}`,
      );
    t.end();
  });
}

t.test(
  'resolver - subscriptionFacts reads a Manual Subscription the same as an Automatic one',
  (t) => {
    const sub = {
      metadata: { name: 'a', namespace: 'ns' },
      spec: {
        name: 'a',
        source: 'cat',
        sourceNamespace: 'olm',
        channel: 'stable',
        installPlanApproval: 'Manual' as const,
      },
    };
    const r = resolveNamespace({
      namespace: 'ns',
      subscriptions: [subscriptionFacts(sub)],
      installed: [],
      operatorGroups: null,
      catalogs: [{ name: 'cat', namespace: 'olm', priority: 0, index: catalogIndex([alpha]) }],
    });
    t.same(compact(r), ['a:install:a.v1.2.0@cat']);
    t.end();
  },
);

t.test('resolver - a startingCSV bundle is marked as such', (t) => {
  const r = run({
    name: '',
    catalogs: [{ name: 'cat', packages: [alpha] }],
    subs: [{ name: 'a', channel: 'stable', startingCSV: 'a.v1.1.0' }],
    bundles: [],
  });
  t.equal(r.bundles[0]?.startingCSV, true);
  t.end();
});

t.test('resolver - the explanation of a conflict is minimal: unrelated facts are left out', (t) => {
  const r = run({
    name: '',
    catalogs: [
      { name: 'cat', packages: [needs('b', { requires: ['Gadget.v1.example.com'] }), alpha, dep] },
    ],
    subs: [{ name: 'b' }, { name: 'a' }, { name: 'dep' }],
    bundles: [],
  });
  const p = r.problems.find((q) => q.subscription === 'b');
  t.same(p?.facts, [
    'subscription b requires at least one of b.v1.0.0 (channel stable of catalog olm/cat)',
    'bundle b.v1.0.0 requires an operator providing Gadget (example.com/v1), and no operator in olm/cat or installed in namespace ns provides one',
  ]);
  t.end();
});
