package io.lifeline.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class CostModelTest {
    private static final CostModel.Prices PRICES = new CostModel.Prices(1.0, 0.2, 0.0000133334, 1.0, 0.625, 0.125, 0,
            1.0, 0.025);

    @Test
    void perAgentMonth_singleAgentAt30s_addsUpEachLine() {
        CostModel.Usage u = new CostModel.Usage(30, 1, 1, 3, 300, 1, 4, 0.025, 1, 3, 12, 100);
        CostModel.Cost c = CostModel.perAgentMonth(u, PRICES);
        double beats = 86_400;
        assertEquals(beats / 1e6, c.api(), 1e-12);
        assertEquals(beats * 0.625 / 1e6, c.dynamoWrites(), 1e-12);
        double invocations = beats + 8_640 + 864;
        assertEquals(invocations * 0.2 / 1e6, c.lambdaRequests(), 1e-12);
        assertEquals(invocations * 0.003 * 0.0000133334, c.lambdaCompute(), 1e-12);
        assertEquals((4 * 60 * 24 * 30 * 0.025 + 8_640) * 0.125 / 1e6, c.dynamoReads(), 1e-12);
        assertEquals(3 / 1e6, c.events(), 1e-12);
        assertEquals(12 * 0.025 / 1e3, c.stepFunctions(), 1e-12);
        assertEquals(c.api() + c.lambdaRequests() + c.lambdaCompute() + c.dynamoWrites() + c.dynamoReads()
                + c.events() + c.stepFunctions(), c.total(), 1e-12);
    }

    @Test
    void perAgentMonth_batchOfTen_dividesRequestsButNotWrites() {
        CostModel.Cost one = CostModel.perAgentMonth(new CostModel.Usage(30, 1, 1, 3, 300, 1, 4, 0.025, 1, 3, 12, 100),
                PRICES);
        CostModel.Cost ten = CostModel.perAgentMonth(new CostModel.Usage(30, 10, 1, 3, 300, 1, 4, 0.025, 1, 3, 12, 100),
                PRICES);
        assertEquals(one.api() / 10, ten.api(), 1e-12);
        assertEquals(one.dynamoWrites(), ten.dynamoWrites(), 1e-12);
    }

    @Test
    void perAgentMonth_hostLeaseOfTenAnd25_isOneWriteAndOneRequestPerHost_withinTwoCents() {
        CostModel.Cost one = CostModel.perAgentMonth(new CostModel.Usage(30, 1, 1, 3, 300, 1, 4, 0.025, 1, 3, 12, 100),
                PRICES);
        CostModel.Cost ten = CostModel.perAgentMonth(new CostModel.Usage(30, 10, 0.1, 6, 300, 1, 4, 0.025, 1, 3, 12,
                1000), PRICES);
        CostModel.Cost many = CostModel.perAgentMonth(new CostModel.Usage(30, 25, 0.04, 6, 300, 1, 4, 0.025, 1, 3, 12,
                2500), PRICES);
        assertEquals(one.dynamoWrites() / 10, ten.dynamoWrites(), 1e-12);
        assertEquals(one.dynamoWrites() / 25, many.dynamoWrites(), 1e-12);
        assertEquals(one.api() / 25, many.api(), 1e-12);
        assertTrue(ten.total() <= 0.02, "host of 10: " + ten);
        assertTrue(many.total() < ten.total(), "host of 25: " + many);
    }
}
