/** The repositories an image ref names (`{resourceType}/{name}:{tag}`; reference §1.9). */
export const IMAGE_RESOURCE_TYPES = ['agents', 'functions', 'sandboxes', 'jobs', 'applications'] as const;
export type ImageResourceType = (typeof IMAGE_RESOURCE_TYPES)[number];
