// The operator-conditions room: the OperatorCondition controller's definition, and what the CSV
// lifecycle uses of OperatorConditions (the generator, the upgrade gate).
export { operatorConditionFunction } from './definition.js';
export { generatorWrites } from './generator.js';
export { mentionsUpgradeable, upgradeBlocked } from './upgradeable.js';
export {
  operatorConditionApiVersion,
  type ServedOperatorCondition,
  type OperatorConditionSnapshot,
} from './types.js';
