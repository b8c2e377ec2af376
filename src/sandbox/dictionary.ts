/**
 * The sandbox's fixed dictionaries: buildings and floors, express types and
 * express tags. They never change, so they are deep-frozen once and served as they are.
 */

/** A floor of a building. */
import { deepFreeze } from '../core/deep-freeze.js';
export interface Floor {
  readonly floorId: number;
  readonly floorName: string;
}

/** A building with its floors; `get_address` answers an array of these. */
export interface Mansion {
  readonly mansionId: number;
  readonly mansionName: string;
  readonly floors: readonly Floor[];
}

/** An express type; `get_express_type` answers an array of these. */
export interface ExpressType {
  readonly expressTypeId: number;
  readonly expressTypeName: string;
}

/** An express tag; ids are bit flags, combined by bitwise OR in `expressTagIds`. */
export interface ExpressTag {
  readonly expressTagId: number;
  readonly expressTagName: string;
}

function floors(mansionId: number, names: readonly string[]): Floor[] {
  return names.map((floorName, index) => ({ floorId: mansionId * 100 + index + 1, floorName }));
}

/** Four buildings; floor ids are `mansionId * 100 + n`, so they are unique across buildings. */
export const MANSIONS: readonly Mansion[] = deepFreeze([
  { mansionId: 1, mansionName: 'Harbour Tower', floors: floors(1, ['B1', '1F', '2F', '3F', '4F']) },
  { mansionId: 2, mansionName: 'Riverside Plaza', floors: floors(2, ['1F', '2F', '3F']) },
  { mansionId: 3, mansionName: 'Garden Court', floors: floors(3, ['1F', '2F', '3F', '4F', '5F', '6F']) },
  { mansionId: 4, mansionName: 'Sky Centre', floors: floors(4, ['G', '1F', '2F', '3F']) },
]);

/** Express types 1..3. */
export const EXPRESS_TYPES: readonly ExpressType[] = deepFreeze([
  { expressTypeId: 1, expressTypeName: 'Standard' },
  { expressTypeId: 2, expressTypeName: 'Express' },
  { expressTypeId: 3, expressTypeName: 'Same-day' },
]);

/** Express tags 1, 2, 4, 8: combinable bit flags. */
export const EXPRESS_TAGS: readonly ExpressTag[] = deepFreeze([
  { expressTagId: 1, expressTagName: 'Fragile' },
  { expressTagId: 2, expressTagName: 'Urgent' },
  { expressTagId: 4, expressTagName: 'Cold chain' },
  { expressTagId: 8, expressTagName: 'Oversized' },
]);

/** Bitwise OR of every known tag id; any other bit in `expressTagIds` is rejected. */
export const EXPRESS_TAG_MASK = EXPRESS_TAGS.reduce((mask, tag) => mask | tag.expressTagId, 0);

const mansionById = new Map(MANSIONS.map((mansion) => [mansion.mansionId, mansion]));
const mansionIdByFloorId = new Map(
  MANSIONS.flatMap((mansion) => mansion.floors.map((floor) => [floor.floorId, mansion.mansionId] as const)),
);
const expressTypeById = new Map(EXPRESS_TYPES.map((type) => [type.expressTypeId, type]));

export function findMansion(mansionId: number): Mansion | undefined {
  return mansionById.get(mansionId);
}

/** The building a floor belongs to, or undefined for an unknown floor id. */
export function mansionIdOfFloor(floorId: number): number | undefined {
  return mansionIdByFloorId.get(floorId);
}

export function findExpressType(expressTypeId: number): ExpressType | undefined {
  return expressTypeById.get(expressTypeId);
}
