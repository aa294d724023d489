// zod schemas of the File-Based Catalog objects and property values olmq reads (spec §11).
// Unknown fields are allowed (and dropped); only what the index uses is checked.
import { z } from 'zod';

/** A property as written in a catalog: a type and an opaque value. */
export const PropertySchema = z.object({ type: z.string().min(1), value: z.unknown() });
/** A catalog property. */
export type Property = z.infer<typeof PropertySchema>;

/** olm.package object. */
export const PackageObjectSchema = z.object({
  schema: z.literal('olm.package'),
  name: z.string().min(1),
  defaultChannel: z.string().optional(),
  description: z.string().optional(),
  properties: z.array(PropertySchema).optional(),
});
/** An olm.package object. */
export type PackageObject = z.infer<typeof PackageObjectSchema>;

/** One entry of an olm.channel object. */
export const ChannelEntrySchema = z.object({
  name: z.string().min(1),
  replaces: z.string().optional(),
  skips: z.array(z.string()).optional(),
  skipRange: z.string().optional(),
});

/** olm.channel object. */
export const ChannelObjectSchema = z.object({
  schema: z.literal('olm.channel'),
  package: z.string().min(1),
  name: z.string().min(1),
  entries: z.array(ChannelEntrySchema),
  properties: z.array(PropertySchema).optional(),
});
/** An olm.channel object. */
export type ChannelObject = z.infer<typeof ChannelObjectSchema>;

/** olm.bundle object. */
export const BundleObjectSchema = z.object({
  schema: z.literal('olm.bundle'),
  name: z.string().min(1),
  package: z.string().min(1),
  image: z.string().optional(),
  properties: z.array(PropertySchema).optional(),
  relatedImages: z.array(z.object({ name: z.string().optional(), image: z.string() })).optional(),
});
/** An olm.bundle object. */
export type BundleObject = z.infer<typeof BundleObjectSchema>;

/** olm.deprecations object (at most one per package). */
export const DeprecationsObjectSchema = z.object({
  schema: z.literal('olm.deprecations'),
  package: z.string().min(1),
  entries: z.array(
    z.object({
      reference: z.object({
        schema: z.enum(['olm.package', 'olm.channel', 'olm.bundle']),
        name: z.string().optional(),
      }),
      message: z.string().min(1),
    }),
  ),
});
/** An olm.deprecations object. */
export type DeprecationsObject = z.infer<typeof DeprecationsObjectSchema>;

/** Value of olm.package. */
export const PackagePropertySchema = z.object({
  packageName: z.string().min(1),
  version: z.string().min(1),
  release: z.string().optional(),
});

/** Value of olm.gvk and olm.gvk.required. */
export const GvkPropertySchema = z.object({
  group: z.string(),
  version: z.string().min(1),
  kind: z.string().min(1),
});

/** Value of olm.package.required. */
export const PackageRequiredPropertySchema = z.object({
  packageName: z.string().min(1),
  versionRange: z.string().min(1),
});

/** Value of olm.bundle.object (inline data; `ref` to files is not supported in a catalog image). */
export const BundleObjectPropertySchema = z.object({ data: z.string().min(1) });
