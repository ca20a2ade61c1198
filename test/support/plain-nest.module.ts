import { Body, Controller, Get, Module, Param, Post, Query } from '@nestjs/common';
import { declareScope, RequiresScope } from '../../src/auth/scopes';
import { Type } from 'class-transformer';
import {
  IsArray,
  IsDate,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';

// DTOs as the NestJS validation documentation writes them: class-validator and class-transformer
// decorators only, nothing of the wire layer.

export class PlainItemDto {
  @IsString()
  @MaxLength(20)
  name!: string;

  @IsInt()
  @Min(1)
  quantity!: number;
}

export class CreatePlainDto {
  @IsInt()
  @Min(1)
  @Max(10)
  n!: number;

  @IsString()
  @IsNotEmpty()
  name!: string;

  @IsOptional()
  @IsDate()
  due?: Date;

  @IsOptional()
  @IsArray()
  @IsString({ each: true })
  tags?: string[];

  @IsOptional()
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => PlainItemDto)
  items?: PlainItemDto[];
}

export class ListQueryDto {
  @IsOptional()
  @IsInt()
  @Min(1)
  page?: number;

  @IsOptional()
  @IsIn(['name', 'date'])
  sort?: string;
}

export class ItemParamsDto {
  @IsInt()
  @Min(1)
  id!: number;

  @IsString()
  @MaxLength(10)
  slug!: string;
}

/** What a handler received: the value, and the class of each record, to show it was converted. */
function echo(received: object) {
  const items = (received as Partial<CreatePlainDto>).items;
  return {
    received,
    classes: [received, ...(items ?? [])].map((record) => record.constructor.name),
  };
}

const PLAIN_NEST_USE = declareScope('plain-nest:use', 'Call the plain NestJS routes.');

/** Routes as a team writes them from the NestJS documentation, with plain DTOs. */
@RequiresScope(PLAIN_NEST_USE)
@Controller('PlainNest')
class PlainNestController {
  @Post('Create')
  create(@Body() createPlainDto: CreatePlainDto) {
    return echo(createPlainDto);
  }

  @Post('Untyped')
  untyped(@Body() body: Record<string, unknown>) {
    return { body };
  }

  @Post('Member')
  member(@Body('name') name: string, @Body('n') n: string) {
    return { name, n };
  }

  @Get('List')
  list(@Query() query: ListQueryDto) {
    return echo(query);
  }

  @Get('Filtered')
  filtered(@Query('filter') filter: ListQueryDto) {
    return echo(filter);
  }

  @Get('Item/:id/:slug')
  item(@Param() params: ItemParamsDto) {
    return echo(params);
  }

  @Get('Raw/:id')
  raw(@Param('id') id: string) {
    return { id };
  }
}

/** Mounted beside the service's modules by the plain-nest suite only. */
@Module({ controllers: [PlainNestController] })
export class PlainNestModule {}
