import { type INestApplicationContext, SetMetadata, type Type } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';
import { declaredIntegrationEvents, type IntegrationEventType } from './integration-event';

const PUBLISHES = Symbol('PUBLISHES');

/**
 * On a module's class: the integration events its units of work publish. The AsyncAPI document lists
 * the events of the modules an application mounts, and the module map (`npm run modules`) shows them
 * beside the module, as a Spring Modulith module's published events are.
 */
export function Publishes(...types: IntegrationEventType[]): ClassDecorator {
  return SetMetadata(PUBLISHES, types);
}

/** The events a module's class says it publishes. */
export function eventsPublishedBy(module: Type): readonly IntegrationEventType[] {
  return (Reflect.getMetadata(PUBLISHES, module) as IntegrationEventType[] | undefined) ?? [];
}

/** The events the application's modules publish, in the order they were declared. */
export function publishedEvents(app: INestApplicationContext): IntegrationEventType[] {
  return eventsPublishedIn(app.get(ModulesContainer));
}

/** The events the modules of a container publish, in the order they were declared. */
export function eventsPublishedIn(modules: ModulesContainer): IntegrationEventType[] {
  const published = new Set<IntegrationEventType>();
  for (const module of modules.values())
    for (const type of eventsPublishedBy(module.metatype)) published.add(type);
  return declaredIntegrationEvents().filter((type) => published.has(type));
}
