"""boto3 against the Lifeline engine's endpoint (run by EndpointTest): argv[1] is the endpoint URL.

Prints one line per check; exits non-zero (with the failed assertion) on the first answer that differs from
what DynamoDB gives.
"""
import sys

import boto3
from botocore.config import Config

url = sys.argv[1]
db = boto3.client("dynamodb", endpoint_url=url, region_name="ap-southeast-2",
                  aws_access_key_id="whatever", aws_secret_access_key="whatever",
                  config=Config(retries={"max_attempts": 1}))
t = "boto3-table"
db.create_table(TableName=t, BillingMode="PAY_PER_REQUEST",
                AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                                      {"AttributeName": "sk", "AttributeType": "N"}],
                KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                           {"AttributeName": "sk", "KeyType": "RANGE"}])
assert t in db.list_tables()["TableNames"]
print("created")

for i in range(3):
    db.put_item(TableName=t, Item={"pk": {"S": "a"}, "sk": {"N": str(i)}, "status": {"S": "ready"},
                                   "blob": {"B": bytes([0, 255, i])}, "tags": {"SS": ["x", "y"]}})
got = db.get_item(TableName=t, Key={"pk": {"S": "a"}, "sk": {"N": "1"}}, ConsistentRead=True)["Item"]
assert got["blob"]["B"] == bytes([0, 255, 1]), got
assert sorted(got["tags"]["SS"]) == ["x", "y"], got
print("put and get")

try:
    db.update_item(TableName=t, Key={"pk": {"S": "a"}, "sk": {"N": "1"}},
                   UpdateExpression="SET #s = :w", ConditionExpression="#s = :dead",
                   ExpressionAttributeNames={"#s": "status"},
                   ExpressionAttributeValues={":w": {"S": "working"}, ":dead": {"S": "dead"}},
                   ReturnValuesOnConditionCheckFailure="ALL_OLD")
    raise AssertionError("the conditional update was not refused")
except db.exceptions.ConditionalCheckFailedException as e:
    assert e.response["Error"]["Code"] == "ConditionalCheckFailedException", e.response
    assert e.response["ResponseMetadata"]["HTTPStatusCode"] == 400, e.response
    assert e.response["Item"]["status"] == {"S": "ready"}, e.response
    print("conditional update refused with the item:", e.response["Item"]["status"]["S"])

page = db.query(TableName=t, KeyConditionExpression="pk = :p AND sk >= :one",
                ExpressionAttributeValues={":p": {"S": "a"}, ":one": {"N": "1"}},
                ScanIndexForward=False, Limit=1)
assert [i["sk"]["N"] for i in page["Items"]] == ["2"], page
assert page["LastEvaluatedKey"] == {"pk": {"S": "a"}, "sk": {"N": "2"}}, page
rest = db.query(TableName=t, KeyConditionExpression="pk = :p AND sk >= :one",
                ExpressionAttributeValues={":p": {"S": "a"}, ":one": {"N": "1"}},
                ScanIndexForward=False, ExclusiveStartKey=page["LastEvaluatedKey"])
assert [i["sk"]["N"] for i in rest["Items"]] == ["1"], rest
print("query pages")

try:
    db.transact_write_items(TransactItems=[
        {"Put": {"TableName": t, "Item": {"pk": {"S": "b"}, "sk": {"N": "0"}}}},
        {"ConditionCheck": {"TableName": t, "Key": {"pk": {"S": "a"}, "sk": {"N": "0"}},
                            "ConditionExpression": "attribute_not_exists(pk)",
                            "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}}])
    raise AssertionError("the transaction was not cancelled")
except db.exceptions.TransactionCanceledException as e:
    reasons = e.response["CancellationReasons"]
    assert [r["Code"] for r in reasons] == ["None", "ConditionalCheckFailed"], reasons
    assert reasons[1]["Item"]["status"] == {"S": "ready"}, reasons
    assert "Item" not in db.get_item(TableName=t, Key={"pk": {"S": "b"}, "sk": {"N": "0"}}), "half a transaction"
    print("transaction cancelled:", ", ".join(r["Code"] for r in reasons))

try:
    db.describe_table(TableName="no-such-table")
    raise AssertionError("a missing table was described")
except db.exceptions.ResourceNotFoundException as e:
    print("missing table:", e.response["Error"]["Code"])

created = db.describe_table(TableName=t)["Table"]["CreationDateTime"]
assert created.year >= 2024, created
print("ok")
