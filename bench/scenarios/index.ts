import type { Scenario } from '../lib/scenario.js';
import { courierScenario } from './courier.js';
import { historyScenario } from './history.js';
import { hostsScenario } from './hosts.js';
import { oauthScenario } from './oauth.js';
import { quotaScenario } from './quota.js';

/** Every scenario, in run order; `--only <name>` picks some. */
export const scenarios: readonly Scenario[] = [courierScenario, oauthScenario, quotaScenario, historyScenario, hostsScenario];
