import {
  applyDecorators,
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Inject,
  Param,
  Post,
  Res,
} from '@nestjs/common';
import {
  ApiBody,
  ApiConsumes,
  ApiExtraModels,
  ApiOperation,
  ApiParam,
  ApiResponse,
  getSchemaPath,
} from '@nestjs/swagger';
import { type Response } from 'express';
import { AuthenticationError } from '../auth/authenticator';
import { RateLimitedError } from '../auth/rate-limit.guard';
import { declareScope, RequiresScope } from '../auth/scopes';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { CommitOutcomeUnknownError, DatabaseUnavailableError } from '../database/database-errors';
import { FORM_MEDIA_TYPE, JSON_MEDIA_TYPES, WireErrors, WireTag, XML_MEDIA_TYPES } from '../wire';
import { CreateWebhookDto } from './dto/create-webhook.dto';
import { UpdateWebhookDto } from './dto/update-webhook.dto';
import { WebhookSubscriptionDto, WebhookWithSecretDto } from './dto/webhook-subscription.dto';
import { Actor, type WebhookActor, WEBHOOKS_ADMIN } from './webhook-actor';
import { WebhookLimitError, WebhookNotFoundError, WebhooksOffError } from './webhook.errors';
import { WebhookService } from './webhook.service';

export const WEBHOOKS_MANAGE = declareScope(
  'webhooks:manage',
  "Manage the caller's own webhook subscriptions (CreateWebhook, GetWebhook, ListWebhooks, " +
    'UpdateWebhook, RotateWebhookSecret, PauseWebhook, ResumeWebhook, DeleteWebhook), whose ' +
    `secrets sign the events; with ${WEBHOOKS_ADMIN.name}, every one.`,
);

const EXAMPLE_ID = '3f1c9a52-7d4e-4b8a-9e21-6c0d5f7a8b93';

/** A subscription as the routes answer with it. */
const SUBSCRIPTION_EXAMPLE: WebhookSubscriptionDto = {
  id: EXAMPLE_ID,
  owner: 'crm-sync',
  url: 'https://crm.example.com/hooks/property-sales',
  types: ['property-sales.transaction.agents-changed'],
  description: 'CRM: agent changes',
  status: 'active',
  disabled_reason: null,
  created_at: '2026-11-28T09:15:00+00:00',
  updated_at: '2026-11-28T09:15:00+00:00',
  last_delivered_event_id: null,
  failing_since: null,
};
const WITH_SECRET_EXAMPLE: WebhookWithSecretDto = {
  ...SUBSCRIPTION_EXAMPLE,
  secret: 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD2Ilq2ihpCwk=',
};

const ID = ApiParam({ name: 'id', format: 'uuid', example: EXAMPLE_ID });

/**
 * A plain DTO's body, read from JSON, XML and form posts as every route's is; its example is its
 * members' (the wire layer writes a whole example in each format for wire models alone).
 */
const RequestBody = (type: new () => object, description: string) =>
  applyDecorators(
    ApiConsumes(...JSON_MEDIA_TYPES, ...XML_MEDIA_TYPES, FORM_MEDIA_TYPE),
    ApiBody({ type, description, required: true }),
  );

/** A JSON answer with its example. */
const Answer = (status: number, type: new () => object, description: string, example: object) =>
  ApiResponse({
    status,
    description,
    content: Object.fromEntries(
      JSON_MEDIA_TYPES.map((mediaType) => [
        mediaType,
        { schema: { $ref: getSchemaPath(type) }, example },
      ]),
    ),
  });

/** The errors every route answers besides its own. */
const ERRORS = [
  AuthenticationError,
  WebhooksOffError,
  RateLimitedError,
  500,
  DatabaseUnavailableError,
] as const;

const onlyWhenOn = (text: string) =>
  `${text} On only when the service is run with WEBHOOKS=true; otherwise 404.`;

/** What every route but CreateWebhook says of whose subscriptions it reaches. */
const OWN_ONLY =
  `Only the caller's own subscriptions (every one with ${WEBHOOKS_ADMIN.name}): another's id ` +
  'answers 404, as a missing one does.';

@WireTag(
  'Webhook',
  'Webhook subscriptions: each committed event a subscription selects is POSTed to its URL as the ' +
    'CloudEvent the broker gets, signed as Standard Webhooks specifies, in outbox order, until ' +
    'acknowledged (2xx).',
)
@ApiExtraModels(WebhookSubscriptionDto, WebhookWithSecretDto)
@Controller('Webhook')
export class WebhookController {
  constructor(
    private readonly webhooks: WebhookService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Post('CreateWebhook')
  @HttpCode(201)
  @ApiOperation({
    operationId: 'CreateWebhook',
    summary: 'Subscribes a URL to the events.',
    description: onlyWhenOn(
      'Checks the URL (https://, and no private, loopback or link-local address, the name resolved), ' +
        'and answers with the subscription and its signing secret, shown only here; Location is its ' +
        'GetWebhook address. It hears of every event committed from now on that its types select. ' +
        "It belongs to the caller (its API key's name or its token's subject); 409 when the caller " +
        'has WEBHOOKS_MAX_PER_OWNER subscriptions, or the service WEBHOOKS_MAX_SUBSCRIPTIONS.',
    ),
  })
  @RequestBody(CreateWebhookDto, 'The subscription.')
  @Answer(201, WebhookWithSecretDto, 'Created, with its secret.', WITH_SECRET_EXAMPLE)
  @ApiResponse({
    status: 201,
    headers: { Location: { description: 'Its GetWebhook address.', schema: { type: 'string' } } },
  })
  @RequiresScope(WEBHOOKS_MANAGE)
  @WireErrors(400, 413, 415, ...ERRORS, WebhookLimitError, CommitOutcomeUnknownError)
  async create(
    @Body() body: CreateWebhookDto,
    @Actor() actor: WebhookActor,
    @Res({ passthrough: true }) response: Response,
  ): Promise<WebhookWithSecretDto> {
    this.checkOn();
    const row = await this.webhooks.create(body, actor);
    response.location(`${this.prefix}/Webhook/GetWebhook/${row.id}`);
    return WebhookWithSecretDto.withSecret(row);
  }

  @Get('GetWebhook/:id')
  @ApiOperation({
    operationId: 'GetWebhook',
    summary: 'One subscription, without its secret.',
    description: onlyWhenOn(
      `Its status, why it is disabled if it is, and its last delivery. ${OWN_ONLY}`,
    ),
  })
  @ID
  @Answer(200, WebhookSubscriptionDto, 'The subscription.', SUBSCRIPTION_EXAMPLE)
  @RequiresScope(WEBHOOKS_MANAGE)
  @WireErrors(...ERRORS, WebhookNotFoundError)
  async get(
    @Param('id') id: string,
    @Actor() actor: WebhookActor,
  ): Promise<WebhookSubscriptionDto> {
    this.checkOn();
    return WebhookSubscriptionDto.of(await this.webhooks.find(id, actor));
  }

  @Get('ListWebhooks')
  @ApiOperation({
    operationId: 'ListWebhooks',
    summary: "The caller's subscriptions, oldest first, without their secrets.",
    description: onlyWhenOn(
      `A JSON array of the caller's own subscriptions; every one with ${WEBHOOKS_ADMIN.name}.`,
    ),
  })
  @ApiResponse({
    status: 200,
    description: 'The subscriptions.',
    content: Object.fromEntries(
      JSON_MEDIA_TYPES.map((mediaType) => [
        mediaType,
        {
          schema: { type: 'array', items: { $ref: getSchemaPath(WebhookSubscriptionDto) } },
          example: [SUBSCRIPTION_EXAMPLE],
        },
      ]),
    ),
  })
  @RequiresScope(WEBHOOKS_MANAGE)
  @WireErrors(...ERRORS)
  async list(@Actor() actor: WebhookActor): Promise<WebhookSubscriptionDto[]> {
    this.checkOn();
    return (await this.webhooks.list(actor)).map((row) => WebhookSubscriptionDto.of(row));
  }

  @Post('UpdateWebhook/:id')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'UpdateWebhook',
    summary: "Changes a subscription's URL, types or description.",
    description: onlyWhenOn(
      'The members given are changed, the others kept; a new URL is checked as at creation. Its ' +
        `checkpoint stays: the events after its last delivery go to the new URL. ${OWN_ONLY}`,
    ),
  })
  @ID
  @RequestBody(UpdateWebhookDto, 'What changes.')
  @Answer(200, WebhookSubscriptionDto, 'The subscription as changed.', SUBSCRIPTION_EXAMPLE)
  @RequiresScope(WEBHOOKS_MANAGE)
  @WireErrors(400, 413, 415, ...ERRORS, WebhookNotFoundError, CommitOutcomeUnknownError)
  async update(
    @Param('id') id: string,
    @Body() body: UpdateWebhookDto,
    @Actor() actor: WebhookActor,
  ): Promise<WebhookSubscriptionDto> {
    this.checkOn();
    return WebhookSubscriptionDto.of(await this.webhooks.update(id, body, actor));
  }

  @Post('RotateWebhookSecret/:id')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'RotateWebhookSecret',
    summary: 'A new signing secret; the previous one signs too for a grace period.',
    description: onlyWhenOn(
      'Answers with the new secret, shown only here. For WEBHOOKS_SECRET_GRACE_MS each delivery ' +
        'carries two v1 signatures in webhook-signature, one by each secret, so the subscriber ' +
        `switches at its own pace. ${OWN_ONLY}`,
    ),
  })
  @ID
  @Answer(200, WebhookWithSecretDto, 'The subscription, with its new secret.', WITH_SECRET_EXAMPLE)
  @RequiresScope(WEBHOOKS_MANAGE)
  @WireErrors(413, 415, ...ERRORS, WebhookNotFoundError, CommitOutcomeUnknownError)
  async rotateSecret(
    @Param('id') id: string,
    @Actor() actor: WebhookActor,
  ): Promise<WebhookWithSecretDto> {
    this.checkOn();
    return WebhookWithSecretDto.withSecret(await this.webhooks.rotateSecret(id, actor));
  }

  @Post('PauseWebhook/:id')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'PauseWebhook',
    summary: 'Stops the deliveries; the checkpoint stays.',
    description: onlyWhenOn(
      'ResumeWebhook delivers what was missed, while the outbox still holds it: a paused ' +
        `subscription does not hold events back from the purge (EVENTS_RETENTION_MS). ${OWN_ONLY}`,
    ),
  })
  @ID
  @Answer(200, WebhookSubscriptionDto, 'The subscription, paused.', {
    ...SUBSCRIPTION_EXAMPLE,
    status: 'paused',
  })
  @RequiresScope(WEBHOOKS_MANAGE)
  @WireErrors(413, 415, ...ERRORS, WebhookNotFoundError, CommitOutcomeUnknownError)
  async pause(
    @Param('id') id: string,
    @Actor() actor: WebhookActor,
  ): Promise<WebhookSubscriptionDto> {
    this.checkOn();
    return WebhookSubscriptionDto.of(await this.webhooks.pause(id, actor));
  }

  @Post('ResumeWebhook/:id')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'ResumeWebhook',
    summary: 'Delivers again, from the checkpoint: a paused or a disabled subscription.',
    description: onlyWhenOn(
      'Its failures are forgotten (failing_since, the retry schedule) and the next delivery is ' +
        `made at once. ${OWN_ONLY}`,
    ),
  })
  @ID
  @Answer(200, WebhookSubscriptionDto, 'The subscription, active.', SUBSCRIPTION_EXAMPLE)
  @RequiresScope(WEBHOOKS_MANAGE)
  @WireErrors(413, 415, ...ERRORS, WebhookNotFoundError, CommitOutcomeUnknownError)
  async resume(
    @Param('id') id: string,
    @Actor() actor: WebhookActor,
  ): Promise<WebhookSubscriptionDto> {
    this.checkOn();
    return WebhookSubscriptionDto.of(await this.webhooks.resume(id, actor));
  }

  @Delete('DeleteWebhook/:id')
  @HttpCode(204)
  @ApiOperation({
    operationId: 'DeleteWebhook',
    summary: 'Deletes a subscription and its checkpoint.',
    description: onlyWhenOn(`Nothing more is delivered to it. ${OWN_ONLY}`),
  })
  @ID
  @ApiResponse({ status: 204, description: 'Deleted.' })
  @RequiresScope(WEBHOOKS_MANAGE)
  @WireErrors(...ERRORS, WebhookNotFoundError, CommitOutcomeUnknownError)
  async remove(@Param('id') id: string, @Actor() actor: WebhookActor): Promise<void> {
    this.checkOn();
    await this.webhooks.remove(id, actor);
  }

  /** The routes' prefix as the Location header writes it: `/api`, or nothing. */
  private get prefix(): string {
    return this.config.apiPrefix === '' ? '' : `/${this.config.apiPrefix}`;
  }

  private checkOn(): void {
    if (!this.webhooks.on) throw new WebhooksOffError();
  }
}
