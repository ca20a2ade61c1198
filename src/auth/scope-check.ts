import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { PATH_METADATA } from '@nestjs/common/constants';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { PUBLIC_ROUTE } from './auth.guard';
import { declaredScopes, REQUIRED_SCOPE } from './scopes';

/** Routes that neither require a scope nor are public: the start stops, naming each. */
export class RouteWithoutScopeError extends Error {
  /** @param routes `Controller.method` of each. */
  constructor(readonly routes: readonly string[]) {
    super(
      `Routes without a scope: ${routes.join(', ')}. Declare each route's scope with ` +
        '@RequiresScope beside its @WireErrors (or @PublicRoute for a probe).',
    );
  }
}

/** A grant in the configuration of a scope no route requires (a misspelling, most likely). */
export class UndeclaredScopeGrantError extends Error {
  /**
   * @param variable The variable that holds the grant: AUTH_API_KEYS or AUTH_JWT_ROLE_SCOPES.
   * @param holder The API key's name or the role the grant is for.
   */
  constructor(
    readonly variable: string,
    holder: string,
    unknown: readonly string[],
    known: readonly string[],
  ) {
    super(
      `${variable} (${holder}) grants ${unknown.join(', ')}, which no route requires; the scopes ` +
        `are ${known.join(', ')}.`,
    );
  }
}

/**
 * At start, before the first request: every route requires a scope (RequiresScope) or is public
 * (PublicRoute), so a new module cannot forget one; every scope the configuration grants is one some
 * module declared, so a misspelt grant does not quietly grant nothing. API keys listed without
 * scopes keep every scope, and the log says so, once.
 */
@Injectable()
export class ScopeCheck implements OnModuleInit {
  private readonly logger = new Logger('Authorization');

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
  ) {}

  onModuleInit(): void {
    const unscoped = this.routesWithoutScope();
    if (unscoped.length > 0) throw new RouteWithoutScopeError(unscoped);
    const { auth } = this.config;
    const grants =
      auth.mode === 'apikey'
        ? auth.keys.map(({ name, scopes = [] }) => ({
            variable: 'AUTH_API_KEYS',
            holder: name,
            scopes,
          }))
        : auth.mode === 'jwt'
          ? [...auth.roleScopes].map(([role, scopes]) => ({
              variable: 'AUTH_JWT_ROLE_SCOPES',
              holder: role,
              scopes,
            }))
          : [];
    const known = new Set(declaredScopes().map(({ name }) => name));
    for (const { variable, holder, scopes } of grants) {
      const unknown = scopes.filter((scope) => !known.has(scope));
      if (unknown.length > 0)
        throw new UndeclaredScopeGrantError(variable, holder, unknown, [...known]);
    }
    if (auth.mode !== 'apikey') return;
    const unlimited = auth.keys.filter(({ scopes }) => !scopes).map(({ name }) => name);
    if (unlimited.length > 0)
      this.logger.warn(
        `API keys listed without scopes may call every operation: ${unlimited.join(', ')}. ` +
          'Grant each only what it needs in AUTH_API_KEYS (name=sha256:<hex>:scope+scope).',
      );
  }

  /** `Controller.method` of each route that neither requires a scope nor is public. */
  private routesWithoutScope(): string[] {
    return this.discovery.getControllers().flatMap(({ metatype, instance }) => {
      if (!metatype || !instance) return [];
      const prototype = Object.getPrototypeOf(instance) as Record<string, () => unknown>;
      return this.scanner
        .getAllMethodNames(prototype)
        .filter((method) => {
          const targets = [prototype[method], metatype];
          return (
            Reflect.getMetadata(PATH_METADATA, prototype[method]) !== undefined &&
            !this.reflector.getAllAndOverride<unknown>(PUBLIC_ROUTE, targets) &&
            !this.reflector.getAllAndOverride<unknown>(REQUIRED_SCOPE, targets)
          );
        })
        .map((method) => `${metatype.name}.${method}`);
    });
  }
}
