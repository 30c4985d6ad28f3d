package io.lifeline.local.stack;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.function.Consumer;
import software.amazon.awssdk.core.SdkRequest;
import software.amazon.awssdk.core.SdkResponse;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.core.interceptor.InterceptorContext;
import software.amazon.awssdk.core.interceptor.SdkExecutionAttribute;
import software.amazon.awssdk.http.SdkHttpRequest;
import software.amazon.awssdk.http.SdkHttpResponse;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * SDK interceptors around an in-process client (the engine's), which runs none itself: each request goes through
 * the interceptors' {@code beforeExecution}, {@code modifyRequest}, then the client, then {@code modifyResponse} and
 * {@code afterExecution}, or {@code onExecutionFailure} when it failed, with the operation's and the service's names
 * in the execution attributes, as the SDK's own client calls them. The HTTP hooks (marshalling, transmission) have
 * nothing to run on: no test's interceptor uses them. An exception an interceptor throws reaches the caller as it
 * is, unretried, as the SDK's does from {@code beforeExecution}.
 */
final class Intercepted {
    private Intercepted() {
    }

    static DynamoDbClient around(DynamoDbClient target, List<ExecutionInterceptor> interceptors) {
        List<ExecutionInterceptor> chain = List.copyOf(interceptors);
        return (DynamoDbClient) Proxy.newProxyInstance(DynamoDbClient.class.getClassLoader(),
                new Class<?>[] {DynamoDbClient.class}, (proxy, method, args) -> {
                    boolean one = args != null && args.length == 1;
                    if (method.isDefault() && one
                            && (args[0] instanceof Consumer || method.getName().endsWith("Paginator"))) {
                        return InvocationHandler.invokeDefault(proxy, method, args);
                    }
                    if (!one || !(args[0] instanceof SdkRequest request)) {
                        try {
                            return method.invoke(target, args);
                        } catch (InvocationTargetException e) {
                            throw e.getCause();
                        }
                    }
                    return call(target, chain, method, request);
                });
    }

    private static Object call(DynamoDbClient target, List<ExecutionInterceptor> chain, Method method,
                               SdkRequest request) throws Throwable {
        String methodName = method.getName();
        ExecutionAttributes attributes = new ExecutionAttributes();
        attributes.putAttribute(SdkExecutionAttribute.SERVICE_NAME, "DynamoDB");
        attributes.putAttribute(SdkExecutionAttribute.OPERATION_NAME,
                methodName.substring(0, 1).toUpperCase(Locale.ROOT) + methodName.substring(1));
        InterceptorContext context = InterceptorContext.builder().request(request).build();
        try {
            for (ExecutionInterceptor i : chain) {
                i.beforeExecution(context, attributes);
            }
            for (ExecutionInterceptor i : chain) {
                context = context.copy(c -> c.request(i.modifyRequest(c.build(), attributes)));
            }
            Object response;
            try {
                response = method.invoke(target, context.request());
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
            context = context.copy(c -> c.response((SdkResponse) response));
            for (ExecutionInterceptor i : chain) {
                context = context.copy(c -> c.response(i.modifyResponse(c.build(), attributes)));
            }
            for (ExecutionInterceptor i : chain) {
                i.afterExecution(context, attributes);
            }
            return context.response();
        } catch (RuntimeException e) {
            InterceptorContext failed = context;
            for (ExecutionInterceptor i : chain) {
                i.onExecutionFailure(new Failed(failed, e), attributes);
            }
            throw e;
        }
    }

    /** The failure as {@code onExecutionFailure} sees it. */
    private record Failed(InterceptorContext context, Throwable exception)
            implements Context.FailedExecution {
        @Override
        public SdkRequest request() {
            return context.request();
        }

        @Override
        public Optional<SdkHttpRequest> httpRequest() {
            return Optional.ofNullable(context.httpRequest());
        }

        @Override
        public Optional<SdkHttpResponse> httpResponse() {
            return Optional.ofNullable(context.httpResponse());
        }

        @Override
        public Optional<SdkResponse> response() {
            return Optional.ofNullable(context.response());
        }
    }
}
