// Lighthouse's accessibility audit of every dashboard view, in Debian's Chromium, offline:
//   npm install --prefix infra/local/lighthouse
//   node infra/local/lighthouse/audit.mjs http://127.0.0.1:8787 <the team's key> [team]
// Runs the sign-in view, the team view, the first agent's page (trouble first, so a dead one when there is one)
// and, when that agent can be revived, the revive confirmation, each in light and dark mode at desktop and phone
// sizes. Prints one score per view and exits 1 unless every score is 100.
import puppeteer from 'puppeteer-core';
import {startFlow} from 'lighthouse';

const [base, key, team = 'local'] = process.argv.slice(2);
if (!base || !key) {
  console.error('usage: node audit.mjs <dashboard URL> <key> [team]');
  process.exit(2);
}
let worst = 100;
for (const scheme of ['light', 'dark']) {
  for (const phone of [false, true]) {
    const browser = await puppeteer.launch({executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
      headless: 'new', args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run']});
    try {
      const page = await browser.newPage();
      await page.emulateMediaFeatures([{name: 'prefers-color-scheme', value: scheme}]);
      const settings = {onlyCategories: ['accessibility'], throttlingMethod: 'provided'};
      if (!phone) { Object.assign(settings, {formFactor: 'desktop', screenEmulation: {disabled: true}}); }
      const flow = await startFlow(page, {config: {extends: 'lighthouse:default', settings}});
      await flow.navigate(base + '/', {name: 'sign-in'});
      const teamInput = await page.$('#team-input');
      await teamInput.click({clickCount: 3});
      await teamInput.type(team);
      await page.type('#key-input', key);
      await page.click('#login-button');
      await page.waitForSelector('tr.agent a.agent-link');
      await flow.snapshot({name: 'team'});
      const href = await page.$eval('tr.agent a.agent-link', a => a.getAttribute('href'));
      // A fresh load of the agent's own URL (the session stays in the tab).
      await page.goto('about:blank');
      await flow.navigate(base + '/' + href, {name: 'agent ' + href});
      await page.waitForFunction(() => document.getElementById('agent-title').textContent.length > 0);
      if (await page.$eval('#revive-button', b => b.offsetParent !== null)) {
        await page.click('#revive-button');
        await page.waitForSelector('#revive-yes', {visible: true});
        await flow.snapshot({name: 'revive confirmation'});
      }
      for (const step of (await flow.createFlowResult()).steps) {
        const category = step.lhr.categories.accessibility;
        const score = Math.round((category.score || 0) * 100);
        worst = Math.min(worst, score);
        const failed = category.auditRefs.filter(r => r.weight > 0 && step.lhr.audits[r.id].score !== null
          && step.lhr.audits[r.id].score < 1).map(r => r.id);
        console.log(`${scheme}${phone ? ' phone' : ''} ${step.name}: accessibility ${score}`
          + (failed.length ? ' (failed: ' + failed.join(', ') + ')' : ''));
      }
    } finally {
      await browser.close();
    }
  }
}
process.exit(worst === 100 ? 0 : 1);
