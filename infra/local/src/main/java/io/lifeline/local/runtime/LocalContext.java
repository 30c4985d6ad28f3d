package io.lifeline.local.runtime;

import com.amazonaws.services.lambda.runtime.ClientContext;
import com.amazonaws.services.lambda.runtime.CognitoIdentity;
import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.LambdaLogger;
import java.nio.charset.StandardCharsets;

/** The Lambda context Local hands a function: its name and the invocation's request id. */
public final class LocalContext implements Context {
    private static final LambdaLogger LOGGER = new LambdaLogger() {
        @Override
        public void log(String message) {
            System.err.println(message);
        }

        @Override
        public void log(byte[] message) {
            System.err.println(new String(message, StandardCharsets.UTF_8));
        }
    };

    private final String functionName;
    private final String requestId;

    public LocalContext(String functionName, String requestId) {
        this.functionName = functionName;
        this.requestId = requestId;
    }

    @Override
    public String getAwsRequestId() {
        return requestId;
    }

    @Override
    public String getLogGroupName() {
        return "/aws/lambda/" + functionName;
    }

    @Override
    public String getLogStreamName() {
        return "local";
    }

    @Override
    public String getFunctionName() {
        return functionName;
    }

    @Override
    public String getFunctionVersion() {
        return "$LATEST";
    }

    @Override
    public String getInvokedFunctionArn() {
        return "arn:aws:lambda:local:000000000000:function:" + functionName;
    }

    @Override
    public CognitoIdentity getIdentity() {
        return null;
    }

    @Override
    public ClientContext getClientContext() {
        return null;
    }

    @Override
    public int getRemainingTimeInMillis() {
        return 10_000;
    }

    @Override
    public int getMemoryLimitInMB() {
        return 1024;
    }

    @Override
    public LambdaLogger getLogger() {
        return LOGGER;
    }
}
