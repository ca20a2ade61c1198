import { Body, Controller, Get, HttpCode, Module, Post, type Type } from '@nestjs/common';
import { ApiOperation, type ResponseObject, type SchemaObject } from '@nestjs/swagger';
import { createApp } from '../../app.factory';
import { declareScope, RequiresScope } from '../../auth/scopes';
import { loadAppConfig } from '../../config/app-config';
import { createOpenApiDocument, requestBodyOf } from '../../openapi/openapi-document';
import { DecimalField, IntField, ListField, TextField } from '../model/wire-fields';
import { WireRecord } from '../model/wire-model';
import { InvalidExampleError } from './wire-examples';
import { WireRequestBody, WireResponse } from './wire-response.decorator';

/*
 * An OpenAPI example the wire would refuse stops the start, and the message says which example,
 * which model and member, and which rule: not only "The request is invalid.".
 */

@WireRecord({ name: 'ExampleSplit' })
class ExampleSplitDto {
  @IntField({ required: true }) agent_id?: number | null;
  @DecimalField({ exactMin: 0, exactMax: 1 }) share?: number | null;
}

@WireRecord({ name: 'ExampleCommission' })
class ExampleCommissionDto {
  @IntField({ required: true }) commission_id?: number | null;
  @DecimalField({ exactMin: 0, exactMax: 0.2, scale: 4 }) rate?: number | null;
  @TextField({ enum: ['pending', 'approved', 'paid'] }) status?: string | null;
  @ListField(() => ExampleSplitDto) splits?: ExampleSplitDto[] | null;
}

const EXAMPLES_USE = declareScope('examples:use', 'Call the example probes.');

@RequiresScope(EXAMPLES_USE)
@Controller('CommissionExample')
class InvalidRequestExampleController {
  @Post('CreateCommission')
  @HttpCode(204)
  @ApiOperation({ operationId: 'CreateCommission' })
  @WireRequestBody(ExampleCommissionDto, 'A commission.', {
    commission_id: 7,
    rate: 0.25,
    status: 'Paid',
    splits: [{ agent_id: 1, share: 0.5 }, { share: 1.5 }],
  })
  create(@Body() commission: ExampleCommissionDto): void {
    void commission;
  }
}

@RequiresScope(EXAMPLES_USE)
@Controller('CommissionExample')
class InvalidResponseExampleController {
  @Get('ListCommissions')
  @ApiOperation({ operationId: 'ListCommissions' })
  @WireResponse(ExampleCommissionDto, {
    list: true,
    description: 'The commissions.',
    example: [
      { commission_id: 7, rate: 0.1, status: 'paid' },
      { commission_id: 8, rate: 0.12345 },
    ],
  })
  list(): ExampleCommissionDto[] {
    return [];
  }
}

@RequiresScope(EXAMPLES_USE)
@Controller('CommissionExample')
class MalformedExampleController {
  @Post('Malformed')
  @HttpCode(204)
  @ApiOperation({ operationId: 'Malformed' })
  @WireRequestBody(ExampleCommissionDto, 'A commission.', [7])
  create(@Body() commission: ExampleCommissionDto): void {
    void commission;
  }
}

@RequiresScope(EXAMPLES_USE)
@Controller('CommissionExample')
class PartialExampleController {
  @Post('ApproveCommission')
  @HttpCode(204)
  @ApiOperation({ operationId: 'ApproveCommission' })
  @WireRequestBody(ExampleCommissionDto, 'A commission.', { commission_id: 7, status: 'approved' })
  @WireResponse(ExampleCommissionDto, {
    description: 'The commission.',
    example: { commission_id: 7 },
  })
  approve(@Body() commission: ExampleCommissionDto): ExampleCommissionDto {
    return commission;
  }
}

@Module({ controllers: [InvalidRequestExampleController] })
class InvalidRequestExampleModule {}

@Module({ controllers: [InvalidResponseExampleController] })
class InvalidResponseExampleModule {}

@Module({ controllers: [MalformedExampleController] })
class MalformedExampleModule {}

@Module({ controllers: [PartialExampleController] })
class PartialExampleModule {}

/** What the start says when the module's examples are written into the document. */
async function startWith(module: Type): Promise<string> {
  const config = loadAppConfig({ DATABASE_URL: 'sqlite::memory:', DEMO_DATA: 'false' });
  try {
    const app = await createApp(config, { logger: false, modules: [module] });
    await app.close();
    return 'started';
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidExampleError);
    return (error as Error).message;
  }
}

describe('an OpenAPI example the wire refuses', () => {
  it('stops the start, naming the request example, each member and rule', async () => {
    const message = await startWith(InvalidRequestExampleModule);
    expect(message).toMatch(
      /^The example of the request body of POST \/\S*CommissionExample\/CreateCommission \(CreateCommission\) is not a valid ExampleCommission: /,
    );
    expect(message).toContain(
      'exampleCommission.rate (ExampleCommission.rate): The field rate must be between 0 and 0.2 (DecimalField({ exactMin: 0, exactMax: 0.2 }))',
    );
    expect(message).toContain(
      "exampleCommission.status (ExampleCommission.status): The field status must be one of pending, approved, paid (TextField({ enum: ['pending', 'approved', 'paid'] }))",
    );
    expect(message).toContain(
      'exampleCommission.splits[1].agent_id (ExampleSplit.agent_id): The agent_id field is required (IntField({ required: true }))',
    );
    expect(message).toContain(
      'exampleCommission.splits[1].share (ExampleSplit.share): The field share must be between 0 and 1 (DecimalField({ exactMin: 0, exactMax: 1 })).',
    );
    expect(message).not.toContain('The request is invalid.');
  });

  it('names a response example, and the record of a list', async () => {
    expect(await startWith(InvalidResponseExampleModule)).toMatch(
      /^The example of the 200 response of GET \/\S*CommissionExample\/ListCommissions \(ListCommissions\)\[1\] is not a valid ExampleCommission: exampleCommission\.rate \(ExampleCommission\.rate\): The field rate must have at most 4 decimal places \(DecimalField\(\{ scale: 4 \}\)\)\.$/,
    );
  });

  it('names an example that is no record at all', async () => {
    expect(await startWith(MalformedExampleModule)).toMatch(
      /^The example of the request body of POST \/\S*CommissionExample\/Malformed \(Malformed\) is not a valid ExampleCommission: The request body must be a JSON object holding one ExampleCommission\.$/,
    );
  });
});

describe('a request example naming some members', () => {
  it('is written with those members only, in every format: what "Try it out" sends', async () => {
    const config = loadAppConfig({ DATABASE_URL: 'sqlite::memory:', DEMO_DATA: 'false' });
    const app = await createApp(config, { logger: false, modules: [PartialExampleModule] });
    try {
      const document = createOpenApiDocument(app, config, '1.0.0');
      const operation = Object.entries(document.paths).find(([path]) =>
        path.endsWith('/ApproveCommission'),
      )![1].post!;
      const { content } = requestBodyOf(document, operation)!;
      const sent = { commission_id: 7, status: 'approved' };
      expect(content['application/json'].example).toEqual(sent);
      expect(content['application/x-www-form-urlencoded'].example).toEqual(sent);
      expect(content['application/xml'].example).toMatch(
        /^<ExampleCommission [^>]*><commission_id>7<\/commission_id><status>approved<\/status><\/ExampleCommission>$/,
      );
      const form = document.components!.schemas!.ExampleCommissionForm as SchemaObject;
      expect(Object.keys(form.properties!)).toEqual(['commission_id', 'status']);
      // A response example shows every member, as the service writes them.
      const answered = (operation.responses['200'] as ResponseObject).content!['application/json'];
      expect(answered.example).toEqual({
        commission_id: 7,
        rate: null,
        status: null,
        splits: null,
      });
    } finally {
      await app.close();
    }
  });
});
