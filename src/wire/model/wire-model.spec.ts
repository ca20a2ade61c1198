import { relative } from 'node:path';
import { IntField } from './wire-fields';
import { WireRecord, wireModelOf } from './wire-model';

describe('WireRecord schema names', () => {
  it('refuses a second class under a schema name already taken, naming both classes and files', () => {
    @WireRecord({ name: 'Developer' })
    class DeveloperDto {
      @IntField() developer_id?: number | null;
    }
    const declareSecond = () => {
      @WireRecord({ name: 'Developer' })
      class DeveloperSummaryDto {
        @IntField() developer_id?: number | null;
      }
      return DeveloperSummaryDto;
    };

    const file = relative(process.cwd(), __filename);
    expect(declareSecond).toThrow(
      `DeveloperSummaryDto (${file}) and DeveloperDto (${file}) are both declared as the wire ` +
        "schema 'Developer'",
    );
    expect(wireModelOf(DeveloperDto).schemaName).toBe('Developer');
  });

  it('takes a class sharing an XML name under its own schema name', () => {
    @WireRecord({ name: 'Agent' })
    class AgentDto {
      @IntField() agent_id?: number | null;
    }
    @WireRecord({ name: 'Agent', schemaName: 'AgentUpdate' })
    class AgentUpdateDto extends AgentDto {}

    expect(wireModelOf(AgentUpdateDto)).toMatchObject({ name: 'Agent', schemaName: 'AgentUpdate' });
  });
});
