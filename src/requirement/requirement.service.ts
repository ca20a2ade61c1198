import { Injectable } from '@nestjs/common';
import { type EntityManager } from 'typeorm';
import { UnitOfWork } from '../database/unit-of-work';
import { type VersionedSnapshot } from '../wire/versioned-body';
import { pickWireScalars } from '../wire/wire-record';
import { RequirementAcquisitionDto } from './dto/requirement-acquisition.dto';
import { RequirementDto } from './dto/requirement.dto';
import { CATALOGUE_VERSION_ROW, CatalogueVersionEntity } from './entities/catalogue-version.entity';
import { RequirementTypeEntity } from './entities/requirement-type.entity';

/** One primary-key read, written out: it runs on every GetRequirements. */
async function versionOf(manager: EntityManager): Promise<number> {
  const table = manager.connection.getMetadata(CatalogueVersionEntity).tableName;
  const escape = (name: string) => manager.connection.driver.escape(name);
  const rows: Array<{ version: number }> = await manager.query(
    `SELECT ${escape('version')} AS version FROM ${escape(table)} WHERE ${escape('id')} = ${CATALOGUE_VERSION_ROW}`,
  );
  return rows[0]?.version ?? 0;
}

@Injectable()
export class RequirementService {
  constructor(private readonly unitOfWork: UnitOfWork) {}

  /** The catalogue's version now: one primary-key read. */
  version(): Promise<number> {
    return this.unitOfWork.read(versionOf);
  }

  /**
   * Every requirement type with its records, ordered by type then record id, in one query, read in one
   * snapshot with the version it belongs to.
   */
  catalogue(): Promise<VersionedSnapshot<RequirementDto[]>> {
    return this.unitOfWork.readSnapshot(async (manager) => {
      const version = await versionOf(manager);
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
