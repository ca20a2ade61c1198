import { ApiTags } from '@nestjs/swagger';

const descriptions = new Map<string, string>();

/**
 * Groups a controller's operations under a tag of the OpenAPI document, with the tag's description:
 * each module describes its own tags. A tag may be declared by several controllers, with one text.
 */
export function WireTag(name: string, description: string): ClassDecorator {
  const declared = descriptions.get(name);
  if (declared !== undefined && declared !== description)
    throw new Error(`The tag ${name} is described twice, differently`);
  descriptions.set(name, description);
  return ApiTags(name);
}

/**
 * The tags `names`, sorted, each with the description its WireTag gave. A tag without one (a
 * controller's name, which @nestjs/swagger tags an untagged controller with) is listed bare, and
 * `npm run lint:openapi` asks for its description.
 */
export function describedTags(names: Iterable<string>): { name: string; description?: string }[] {
  return [...new Set(names)].sort().map((name) => {
    const description = descriptions.get(name);
    return description === undefined ? { name } : { name, description };
  });
}
