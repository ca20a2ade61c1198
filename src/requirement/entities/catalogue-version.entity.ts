import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * One row counting changes of the requirement catalogue. Every catalogue write advances it in the same
 * database transaction, so every instance knows when its serialized catalogue is stale.
 */
@Entity('catalogue_version')
export class CatalogueVersionEntity {
  @PrimaryColumn({ type: 'int' }) id!: number;
  @Column({ type: 'int' }) version!: number;
}

/** The id of the one row. */
export const CATALOGUE_VERSION_ROW = 1;
