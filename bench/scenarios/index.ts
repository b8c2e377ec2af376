import type { Scenario } from '../lib/scenario.js';
import { courierScenario } from './courier.js';
import { historyScenario } from './history.js';
import { hostsScenario } from './hosts.js';
import { instructionsScenario } from './instructions.js';
import { oauthScenario } from './oauth.js';
import { oauthPeerScenario } from './oauth-peer.js';
import { quotaScenario } from './quota.js';

/** Every scenario, in run order; `--only <name>` picks some, and only `--only` runs the opt-in ones. */
export const scenarios: readonly Scenario[] = [courierScenario, oauthScenario, oauthPeerScenario, quotaScenario, historyScenario, hostsScenario, instructionsScenario];
