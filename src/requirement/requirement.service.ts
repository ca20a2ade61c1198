import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { UnitOfWork } from '../database/unit-of-work';
import { type VersionedSnapshot, pickWireScalars } from '../wire';
import { RequirementAcquisitionDto } from './dto/requirement-acquisition.dto';
import { RequirementDto } from './dto/requirement.dto';
import { CATALOGUE_VERSION_ROW, CatalogueVersionEntity } from './entities/catalogue-version.entity';
import { RequirementTypeEntity } from './entities/requirement-type.entity';

/** One primary-key read, written out: it runs on every GetRequirements. */
function versionStatement(connection: DataSource): string {
  const table = connection.getMetadata(CatalogueVersionEntity).tableName;
  const escape = (name: string) => connection.driver.escape(name);
  return `SELECT ${escape('version')} AS version FROM ${escape(table)} WHERE ${escape('id')} = ${CATALOGUE_VERSION_ROW}`;
}

const versionIn = (rows: ReadonlyArray<{ version: number }>) => rows[0]?.version ?? 0;

@Injectable()
export class RequirementService {
  private readonly versionSql: string;

  constructor(
    private readonly unitOfWork: UnitOfWork,
    @InjectDataSource() dataSource: DataSource,
  ) {
    this.versionSql = versionStatement(dataSource);
  }

  /** The catalogue's version now: one primary-key read. */
  async version(): Promise<number> {
    const [rows] = await this.unitOfWork.readStatements([{ sql: this.versionSql, parameters: [] }]);
    return versionIn(rows as Array<{ version: number }>);
  }

  /**
   * Every requirement type with its records, ordered by type then record id, in one query, read in one
   * snapshot with the version it belongs to.
   */
  catalogue(): Promise<VersionedSnapshot<RequirementDto[]>> {
    return this.unitOfWork.readSnapshot(async (manager) => {
      const version = versionIn(await manager.query(this.versionSql));
      const types = await manager.find(RequirementTypeEntity, {
        relations: { acquisitions: true },
        order: { requirement_type_id: 'ASC', acquisitions: { requirement_id: 'ASC' } },
      });
      const value = types.map((type) => ({
        ...pickWireScalars(RequirementDto, type),
        Acquisition: (type.acquisitions ?? []).map((record) =>
          pickWireScalars(RequirementAcquisitionDto, record),
        ),
      }));
      return { version, value };
    });
  }
}
